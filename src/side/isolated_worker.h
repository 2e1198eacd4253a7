// Internal: what runs in an isolated side's worker process, and the protocol both ends speak.
//
// The worker opens an ordinary live side (OpenLiveSide) and announces itself with kHello:
//   status, runtime version, runtime library, tensors
// then answers each request with kReply:
//   kSetInputs  tensors (+ memfd)                  -> status, tensors, hidden tensors
//   kFetch      released, names                    -> status, dropped [, tensors (+ memfd)]
//   kRunOther   released, model, dir, outputs, tensors (+ memfd)
//                                                  -> status, dropped [, tensors (+ memfd)]
//   kHash                                          -> status, model SHA-256
// "released": regions whose tensors the parent has all let go of (the worker may write them
// again); "dropped": regions the worker destroyed (the parent unmaps them). Results of a side that
// keeps its session are written in place, fetch after fetch of the same names; inputs travel in a
// memfd of their own.
#pragma once

#include <vector>

#include "onnxprobe/side/side.h"
#include "side/child_process.h"
#include "side/wire.h"

namespace onnxprobe::isolation {

void PutSideTensors(wire::Writer* w, const std::vector<SideTensor>& tensors);
std::vector<SideTensor> GetSideTensors(wire::Reader* r);

struct Hello {
  Status status;  // why the worker could not open its live side
  std::string version, library;
  std::vector<SideTensor> tensors;
  bool died = false;  // before saying hello; `exit` says how (the worker is reaped then)
  WorkerExit exit;
};
// Reads a new worker's kHello. Fails when the message is malformed.
Expected<Hello> ReadHello(Keeper* keeper, Worker* worker);

// Serves requests on `sock` until it closes. Runs in the worker process.
void ServeIsolatedSide(int sock, const Model& model, const SideSpec& spec);

}  // namespace onnxprobe::isolation
