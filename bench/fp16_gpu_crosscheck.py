"""Cross-check of onnxprobe's CPU float16 emulation on a GPU with real float16 kernels (PyTorch,
CUDA). The overflow and stacked_ln models of tests/python/fp16_models.py are re-expressed in
PyTorch with the same seeded weights and inputs (those of bench/peer_fp16.py's first draws), run
in full float16 ("all16") and with onnxprobe's block list in float32 ("onnxprobe"); the relative
errors against float32 are to be compared with onnxruntime's CPU provider with storage barriers
(docs/fp16.md, "Checking float16 on a CPU").

usage: python3 bench/fp16_gpu_crosscheck.py      (needs torch with CUDA and numpy)
"""
import numpy as np,torch as T
c='cuda';H=T.float16;F=T.float32
r=np.random.default_rng(0);xo=r.uniform(0,1,(1,64)).astype(np.float32);xs=r.uniform(0,1,(1,64)).astype(np.float32)
r=np.random.default_rng(5);B=[]
for b in range(8):B.append([r.uniform(.5,1.5,64),r.uniform(-.5,.5,64),r.normal(0,30/8,(64,64)),r.normal(0,1,64)])
def t(a,dt):return T.tensor(np.asarray(a,np.float32),device=c).to(dt)
def ln(h,g,b,dt,mixed):
 d=h-h.mean(1,keepdim=True)
 if mixed:s=((d.float()**2).mean(1,keepdim=True)+1e-5).sqrt().to(dt)
 else:s=((d**2).mean(1,keepdim=True)+1e-5).sqrt()
 return d/s*t(g,dt)+t(b,dt)
def stacked(dt,mixed):
 h=t(xs,dt)*1000
 for g,b,w,bi in B:h=h+(ln(h,g,b,dt,mixed)@t(w,dt)+t(bi,dt))
 return [h]
def over(dt,mixed):
 x=t(xo,dt);big=x*3000
 tot=(big.float().sum(1,keepdim=True)*1e-3) if mixed else big.sum(1,keepdim=True)*1e-3
 r_=np.random.default_rng(0);g=r_.uniform(.5,1.5,64);b=r_.uniform(-.5,.5,64)
 return [tot,ln(x*1000,g,b,dt,mixed)]
for name,f in [('overflow',over),('stacked_ln',stacked)]:
 ref=[o.double() for o in f(F,False)]
 for lab,dt,mx in [('all16',H,False),('onnxprobe',H,True)]:
  got=[o.double() for o in f(dt,mx)]
  nf=sum(int((~T.isfinite(g)).sum()) for g in got)
  rel=max(float(T.nan_to_num(g-r_,posinf=1e30,neginf=1e30).norm()/r_.norm()) for g,r_ in zip(got,ref))
  atol=1e-2*min(float(r_.abs().max()) for r_ in ref)
  ok=all(bool(T.allclose(g,r_,rtol=1e-2,atol=atol)) for g,r_ in zip(got,ref))
  print(name,lab,'cuda fp16: pass',ok,'nonfinite',nf,'rel %.3g'%rel)
