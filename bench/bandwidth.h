// This machine's memory bandwidth, measured in the same process as the operators it is compared
// with (by the benchmark suite and by aclnn-cpu-driver --perf).
#ifndef ACLNN_CPU_BENCH_BANDWIDTH_H_
#define ACLNN_CPU_BENCH_BANDWIDTH_H_

#include <string>

namespace bench {

// Bytes/s of a STREAM-like kernel over 256 MiB arrays (median of 7 runs) with `threads`,
// counting each array once (the STREAM convention: a plain store's read-for-ownership is not
// counted). kind: "copy" (1 read + 1 write), "triad" (2R+1W), "rd2wr1" (c = a + b), with plain
// stores; "copy-nt" and "rd2wr1-nt", the same with non-temporal (streaming) stores.
double MeasureBandwidth(const std::string& kind, int threads);
// The reference for the fraction columns, kind "copy" (the cross-entropy operators: one read,
// one write) or "rd2wr1" (LogSoftmaxBackward: two reads, one write): the better of its plain
// and non-temporal versions, each measured once per process and cached (or taken from
// ACLNN_CPU_BENCH_BANDWIDTH, which bench/run.sh sets from its round's Bandwidth/ run).
double Bandwidth(const std::string& kind, int threads);

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_BANDWIDTH_H_
