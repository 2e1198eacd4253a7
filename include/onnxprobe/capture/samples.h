// Input samples: the several input sets a model is checked on (a baseline, a comparison over a
// test set). A sample is a set of input files or a seed; PrepareInputs turns it into tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"

namespace onnxprobe {

enum class SampleSource { kFiles, kSeed };
const char* SampleSourceName(SampleSource s);  // "files", "seed"

struct InputSample {
  std::string name;  // file stem, test_data_set_N folder name, or "seed-<n>"
  SampleSource source = SampleSource::kSeed;
  InputOptions inputs;  // the base options with this sample's files or seed
};

struct SampleOptions {
  // A folder of .npz files (one sample each, keys = input names) and/or ONNX backend-test
  // folders test_data_set_N/ (input_K.pb each); "" = none.
  std::string inputs_dir;
  size_t count = 0;   // seeded random samples: seeds base.seed, base.seed+1, ...
  InputOptions base;  // shapes, dimension values, ranges and the first seed
};

// The samples in name order (folder samples first, then seeded ones); one seeded sample when
// neither a folder nor a count is given. Fails naming the folder when it is missing, holds no
// sample, or a test_data_set_N/ folder holds no input_K.pb.
Expected<std::vector<InputSample>> ListInputSamples(const SampleOptions& options);

// One of `count` shards of a sample list (a job array's task): the samples at positions
// index, index + count, ... of the list (docs/shard.md).
struct SampleShard {
  size_t index = 0, count = 1;
  bool sharded() const { return count > 1; }
};
// "I/N" with 0 <= I < N; fails naming the text.
Expected<SampleShard> ParseSampleShard(const std::string& text);
// The positions of `shard`'s samples in a list of `total`. Fails when the shard is not one
// (I >= N) or holds no sample (more shards than samples; `whose` names the list's owner in the
// message, e.g. "the baseline's").
Expected<std::vector<size_t>> ShardPositions(size_t total, const SampleShard& shard,
                                             const std::string& whose = "");

// `onnxprobe run` over several samples: one dump per sample in the folder `request.output`
// (<index>_<sample>/, each a dump folder) with samples.json naming them ("format":
// "onnxprobe-dump-set"). request.inputs is replaced by each sample's. The folder appears complete
// or not at all (an earlier dump set there is replaced). Fails like CaptureToDump, naming the
// sample.
struct SampleDump {
  std::string name;
  std::string dump;  // folder, relative to the dump set
  DumpReport report;
};
Expected<std::vector<SampleDump>> CaptureSamplesToDumps(const DumpRequest& request,
                                                        const std::vector<InputSample>& samples);

}  // namespace onnxprobe
