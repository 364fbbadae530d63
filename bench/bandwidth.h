// This machine's memory bandwidth, measured in the same process as the operators it is compared
// with (by the benchmark suite and by aclnn-cpu-driver --perf).
#ifndef ACLNN_CPU_BENCH_BANDWIDTH_H_
#define ACLNN_CPU_BENCH_BANDWIDTH_H_

#include <string>

namespace bench {

// Bytes/s of a STREAM-like kernel over 256 MiB arrays (median of 7 runs) with `threads`.
// kind: "copy" (1 read + 1 write), "triad" (2R+1W), "rd2wr1" (c = a + b).
double MeasureBandwidth(const std::string& kind, int threads);
// Cached measurement for the fraction columns: copy for CE ops, rd2wr1 for LogSoftmaxBackward.
double Bandwidth(const std::string& kind, int threads);

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_BANDWIDTH_H_
