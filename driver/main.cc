// aclnn-cpu-driver: runs any of the four operators on a problem from the command line or from a
// list, checks it against the double-precision reference (--check), times it (--perf), dumps
// every tensor as .npy plus a JSON description (--dump) and runs on such a directory's inputs
// (--input). In the spirit of oneDNN's benchdnn; docs/usage.md has the manual.
#include <strings.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "bandwidth.h"
#include "call.h"
#include "core/soc.h"
#include "device_tensor.h"
#include "npy.h"
#include "problem.h"
#include "reference.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tolerance.h"

using optable::Call;
using testing_support::DeviceTensor;

namespace driver {
namespace {

constexpr int kExitFailed = 1, kExitUsage = 2;

struct Options {
  bool check = false, perf = false;
  std::string dump_dir, input_dir, batch_file;
  std::string soc;  // --soc: the SoC profile (through ACLNN_CPU_SOC, as any program gets it)
  int warmup = 3, reps = 20;
  std::vector<Problem> problems;
};

std::string Descr(aclDataType t) {
  switch (t) {
    case ACL_FLOAT:
      return "<f4";
    case ACL_FLOAT16:
      return "<f2";
    case ACL_BF16:
      return "<u2";  // bit patterns: NumPy has no bfloat16
    case ACL_DOUBLE:
      return "<f8";
    case ACL_INT64:
      return "<i8";
    case ACL_INT32:
      return "<i4";
    case ACL_UINT8:
      return "|u1";
    default:
      return "";
  }
}

// Element bits as .npy stores them (little-endian, the low ItemSize bytes of the value):
// floating dtypes through the reference's encoders, integers as two's complement.
npy::Array Encode(aclDataType t, const std::vector<int64_t>& shape, const std::vector<double>& v) {
  npy::Array a;
  a.descr = Descr(t);
  a.shape = shape;
  const size_t size = static_cast<size_t>(npy::ItemSize(a.descr));
  a.data.resize(v.size() * size);
  const bool integer = t == ACL_INT64 || t == ACL_INT32 || t == ACL_UINT8;
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t bits =
        integer ? static_cast<uint64_t>(static_cast<int64_t>(v[i])) : ref::Encode(t, v[i]);
    std::memcpy(a.data.data() + i * size, &bits, size);
  }
  return a;
}

std::vector<double> Decode(aclDataType t, const npy::Array& a) {
  const size_t size = static_cast<size_t>(npy::ItemSize(a.descr));
  std::vector<double> v(a.data.size() / size);
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, a.data.data() + i * size, size);
    switch (t) {
      case ACL_INT64:
        v[i] = static_cast<double>(static_cast<int64_t>(bits));
        break;
      case ACL_INT32:
        v[i] = static_cast<int32_t>(static_cast<uint32_t>(bits));
        break;
      case ACL_UINT8:
        v[i] = static_cast<double>(bits);
        break;
      default:
        v[i] = ref::Decode(t, bits);
    }
  }
  return v;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

// Inputs from DIR/<name>.npy; "" or why not.
std::string FillFrom(Call& c, const std::string& dir) {
  for (size_t i = 0; i < c.size(); ++i) {
    const DeviceTensor* t = c.tensor(i);
    if (t == nullptr || c.param(i).role != optable::Role::kInput) continue;
    const std::string path = dir + "/" + c.param(i).name + ".npy";
    npy::Array a;
    std::string err = npy::Read(path, &a);
    if (!err.empty()) return err;
    if (a.shape != t->shape()) {
      return path + " has shape " + ShapeText(a.shape) + ", the problem needs " +
             ShapeText(t->shape()) + ".";
    }
    if (a.descr != Descr(t->dtype())) {
      return path + " has dtype '" + a.descr + "', the problem needs '" + Descr(t->dtype()) +
             "' (" + optable::DtypeShortName(t->dtype()) + ").";
    }
    c.Set(i, Decode(t->dtype(), a));
  }
  return "";
}

// An attribute's value for problem.json.
nlohmann::json AttrJson(const Problem& p, optable::Attr a) {
  switch (a) {
    case optable::Attr::kDim:
      return p.dim;
    case optable::Attr::kWeight:
      return p.weight;
    case optable::Attr::kIgnoreIndex:
      return p.ignore_index;
    case optable::Attr::kLabelSmoothing:
      return p.label_smoothing;
    case optable::Attr::kZloss:
      return p.zloss;
    default:
      return p.AttrText(a);
  }
}

// --dump: every tensor (outputs as computed) and problem.json; "" or why not.
std::string Dump(const Problem& p, const Call& c, const std::string& dir,
                 const nlohmann::json& result) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) return "cannot create " + dir + ".";
  nlohmann::json j;
  j["driver"] = "aclnn-cpu-driver";
  j["problem"] = p.ToString();
  j["op"] = p.op->name;
  j["shape"] = p.shape;
  j["dtype"] = optable::DtypeShortName(p.dtype);
  for (optable::Attr a : p.op->attrs) j[optable::AttrKey(a)] = AttrJson(p, a);
  j["layout"] = testing_support::LayoutName(p.layout);
  j["seed"] = p.seed;
  j["result"] = result;
  for (size_t i = 0; i < c.size(); ++i) {
    const DeviceTensor* t = c.tensor(i);
    if (t == nullptr) continue;
    const bool output = c.param(i).role == optable::Role::kOutput;
    const std::vector<double> v = output ? t->Get() : c.inputs()[i];
    const std::string file = std::string(c.param(i).name) + ".npy";
    std::string err = npy::Write(dir + "/" + file, Encode(t->dtype(), t->shape(), v));
    if (!err.empty()) return err;
    j["tensors"].push_back({{"name", c.param(i).name},
                            {"role", output ? "output" : "input"},
                            {"file", file},
                            {"dtype", optable::DtypeShortName(t->dtype())},
                            {"npy_descr", Descr(t->dtype())},
                            {"shape", t->shape()}});
  }
  std::ofstream f(dir + "/problem.json");
  f << j.dump(2) << "\n";
  return f ? "" : "cannot write " + dir + "/problem.json.";
}

// Applies the problem's thread count and CPU target; "" or why not.
std::string Configure(const Problem& p) {
  aclnn_cpu::SetNumThreads(p.threads);
  if (p.target.empty()) {
    aclnn_cpu::ForceTarget(0);
    return "";
  }
  const int64_t want = aclnn_cpu::CompiledTargetByName(p.target.c_str());
  std::string known;
  for (int64_t t : aclnn_cpu::SupportedCompiledTargets()) {
    if (t == want) {
      aclnn_cpu::ForceTarget(t);
      return "";
    }
    known += std::string(" ") + aclnn_cpu::TargetName(t);
  }
  return "--cpu-target " + p.target + " is not available here; this CPU runs:" + known + ".";
}

std::string Message() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

// Runs one problem; returns true when it passed. Prints one line (plus details on failure).
bool RunProblem(const Options& o, const Problem& p, size_t index, size_t count) {
  std::printf("[%zu/%zu] %s\n", index + 1, count, p.ToString().c_str());
  std::fflush(stdout);
  const std::string cfg_err = Configure(p);
  if (!cfg_err.empty()) {
    std::printf("  FAILED: %s\n", cfg_err.c_str());
    return false;
  }
  Call c(p);
  if (!o.input_dir.empty()) {
    const std::string err = FillFrom(c, o.input_dir);
    if (!err.empty()) {
      std::printf("  FAILED: --input: %s\n", err.c_str());
      return false;
    }
  } else {
    c.FillRandom();
  }
  nlohmann::json result;
  uint64_t ws_size = 0;
  aclOpExecutor* ex = nullptr;
  int st = c.Phase1(&ws_size, &ex);
  void* ws = nullptr;
  int step = 1;
  if (st == 0) {
    aclSetAclOpExecutorRepeatable(ex);
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
      std::printf("  FAILED: cannot allocate the %llu-byte workspace: %s\n",
                  static_cast<unsigned long long>(ws_size), Message().c_str());
      aclDestroyAclOpExecutor(ex);
      return false;
    }
    step = 2;
    st = c.Phase2(ws, ws_size, ex, nullptr);
    if (st == 0) {
      step = 3;
      st = aclrtSynchronizeStream(nullptr);
    }
  }
  const std::string msg = st == 0 ? "" : Message();
  result["status"] = st;
  result["message"] = msg;
  result["workspace_bytes"] = ws_size;
  result["cpu_target"] = aclnn_cpu::CurrentTargetName();
  result["soc"] = aclrtGetSocName();
  result["threads"] = aclnn_cpu::NumThreads();
  bool ok = st == 0;
  if (st != 0) {
    const bool untouched = c.OutputsUntouched();
    std::printf("  FAILED: %s returned %d: %s (outputs %s)\n",
                step == 1 ? "phase 1" : (step == 2 ? "phase 2" : "aclrtSynchronizeStream"), st,
                msg.c_str(), untouched ? "untouched" : "WRITTEN");
  }
  if (ok && o.check) {
    for (const optable::Verdict& v : c.Check()) {
      const bool pass = v.failure.empty();
      ok = ok && pass;
      std::printf(
          "  check %-14s %s  worst %.3g ulp of %s (%.3g ulp where well conditioned), "
          "%.0f%% of the tolerance used\n",
          v.output.c_str(), pass ? "PASS" : "FAIL", v.stats.max_ulp,
          optable::DtypeShortName(v.dtype), v.stats.max_ulp_conditioned,
          100.0 * v.stats.max_tolerance_used);
      if (!pass) {
        std::printf("    %lld of %lld elements out of tolerance; first: %s\n",
                    static_cast<long long>(v.stats.failures), static_cast<long long>(v.stats.count),
                    v.failure.c_str());
      }
      result["check"][v.output] = {{"pass", pass},
                                   {"max_ulp", v.stats.max_ulp},
                                   {"max_ulp_conditioned", v.stats.max_ulp_conditioned},
                                   {"tolerance_used", v.stats.max_tolerance_used}};
    }
  }
  if (st == 0 && o.perf) {
    std::vector<double> times;
    for (int i = 0; i < o.warmup + o.reps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      c.Phase2(ws, ws_size, ex, nullptr);
      aclrtSynchronizeStream(nullptr);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i >= o.warmup) times.push_back(s);
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    const std::string kind = c.BandwidthKind();
    const double bw = bench::Bandwidth(kind, aclnn_cpu::NumThreads());
    const double rate = c.Bytes() / median;
    std::printf(
        "  perf median %.4g ms (min %.4g, %d reps), %.2f GB/s, %.0f%% of the machine's %s "
        "bandwidth (best of plain and streaming stores, %.2f GB/s), target %s, %d threads\n",
        median * 1e3, times.front() * 1e3, o.reps, rate / 1e9, 100.0 * rate / bw, kind.c_str(),
        bw / 1e9, aclnn_cpu::CurrentTargetName(), aclnn_cpu::NumThreads());
    result["perf"] = {
        {"median_s", median},         {"min_s", times.front()}, {"reps", o.reps},
        {"bytes", c.Bytes()},         {"bytes_per_s", rate},    {"bandwidth_kind", kind},
        {"bandwidth_bytes_per_s", bw}};
  }
  if (!o.dump_dir.empty()) {
    const std::string dir = count == 1 ? o.dump_dir : o.dump_dir + "/" + std::to_string(index + 1);
    if (count > 1) ::mkdir(o.dump_dir.c_str(), 0777);
    const std::string err = Dump(p, c, dir, result);
    if (!err.empty()) {
      std::printf("  FAILED: --dump: %s\n", err.c_str());
      ok = false;
    } else {
      std::printf("  dumped to %s\n", dir.c_str());
    }
  }
  if (ex != nullptr) aclDestroyAclOpExecutor(ex);
  if (ws != nullptr) aclrtFree(ws);
  return ok;
}

// Reads a --batch file: one problem per line, '#' starts a comment; "" or the first error.
std::string ReadBatch(const std::string& path, std::vector<Problem>* out) {
  std::ifstream f(path);
  if (!f) return "--batch: cannot open " + path + ".";
  std::string line;
  for (int no = 1; std::getline(f, line); ++no) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Problem p;
    const std::string err = ParseLine(line, &p);
    if (!err.empty()) return path + ":" + std::to_string(no) + ": " + err;
    out->push_back(p);
  }
  if (out->empty()) return "--batch: " + path + " holds no problem.";
  return "";
}

// Parses the command line into `o`; returns -1 to go on, else the exit code.
int ParseCommandLine(int argc, char** argv, Options* o) {
  CLI::App app(
      "aclnn-cpu-driver: run, check (--check), time (--perf), dump (--dump) any aclnn-cpu "
      "operator problem.\nExample: aclnn-cpu-driver --check --perf --op=ce_grad "
      "--shape=4096x32000 --dtype=bf16 --weight --label-smoothing=0.1");
  Problem p;
  AddProblemOptions(app, p);
  app.add_flag("--check", o->check, "compare with the double-precision reference");
  app.add_flag("--perf", o->perf, "time it: warm-up, repetitions, median, GB/s, bandwidth share");
  app.add_option("--dump", o->dump_dir, "write inputs, outputs (.npy) and problem.json to DIR")
      ->type_name("DIR");
  app.add_option("--input", o->input_dir,
                 "run on DIR's input .npy files (problem from DIR/problem.json unless --op)")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
  app.add_option("--batch", o->batch_file, "problems from FILE, one per line, '#' comments")
      ->type_name("FILE");
  app.add_option("--warmup", o->warmup, "--perf warm-up runs")->check(CLI::Range(0, 1000000));
  app.add_option("--reps", o->reps, "--perf timed runs")->check(CLI::Range(1, 1000000));
  app.add_option("--soc", o->soc,
                 "follow this Ascend SoC's rules (e.g. Ascend910B2, Ascend950PR, Ascend310P3; "
                 "aclnn-cpu: the default); sets ACLNN_CPU_SOC for aclInit")
      ->type_name("NAME");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "aclnn-cpu-driver: %s\nRun with --help for the options.\n", e.what());
    return kExitUsage;
  }
  auto usage = [](const std::string& err) {
    std::fprintf(stderr, "aclnn-cpu-driver: %s\nRun with --help for the options.\n", err.c_str());
    return kExitUsage;
  };
  if (!o->batch_file.empty()) {
    if (app.count("--op") > 0)
      return usage("give either --batch or a problem (--op ...), not both.");
    if (!o->input_dir.empty()) return usage("--input runs one problem; it cannot take --batch.");
    const std::string err = ReadBatch(o->batch_file, &o->problems);
    if (!err.empty()) return usage(err);
    return -1;
  }
  if (!o->input_dir.empty() && app.count("--op") == 0) {
    // The problem comes from problem.json; only how it runs may be changed.
    for (const CLI::Option* opt : app.get_options()) {
      const std::string name = opt->get_name();
      if (opt->count() > 0 && IsProblemOption(name) && name != "--threads" &&
          name != "--cpu-target") {
        return usage(name +
                     " cannot change a problem read by --input (only --threads and "
                     "--cpu-target can); give the whole problem with --op instead.");
      }
    }
    std::ifstream f(o->input_dir + "/problem.json");
    if (!f) return usage("--input: " + o->input_dir + "/problem.json is missing (or give --op).");
    const Problem given = p;
    nlohmann::json j;
    try {
      f >> j;
      const std::string err = ParseLine(j.at("problem").get<std::string>(), &p);
      if (!err.empty()) return usage("--input: " + o->input_dir + "/problem.json: " + err);
    } catch (const nlohmann::json::exception& e) {
      return usage("--input: " + o->input_dir + "/problem.json: " + e.what());
    }
    if (app.count("--threads") > 0) p.threads = given.threads;
    if (app.count("--cpu-target") > 0) p.target = given.target;
  } else if (app.count("--op") == 0) {
    return usage("no problem: give --op (and --shape, ...) or --batch FILE.");
  }
  const std::string err = Validate(p);
  if (!err.empty()) return usage(err);
  o->problems.push_back(p);
  return -1;
}

}  // namespace
}  // namespace driver

int main(int argc, char** argv) {
  driver::Options o;
  const int code = driver::ParseCommandLine(argc, argv, &o);
  if (code >= 0) return code;
  if (!o.check && !o.perf && o.dump_dir.empty()) o.check = true;  // default: check
  if (!o.soc.empty()) setenv(aclnn_cpu::kSocEnvVar, o.soc.c_str(), 1);
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
    std::fprintf(stderr, "aclnn-cpu-driver: runtime initialisation failed: %s\n",
                 driver::Message().c_str());
    return o.soc.empty() ? driver::kExitFailed : driver::kExitUsage;
  }
  const aclnn_cpu::SocProfile soc = aclnn_cpu::CurrentSoc();
  if (!soc.is_cpu()) {
    std::printf(
        "SoC profile %s (%s): the operators refuse what that NPU refuses "
        "(docs/soc_profiles.md)\n",
        soc.name, aclnn_cpu::SocFamilyName(soc.family));
  }
  size_t passed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < o.problems.size(); ++i) {
    if (driver::RunProblem(o, o.problems[i], i, o.problems.size())) ++passed;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("== %zu problems: %zu passed, %zu failed (%.1f s)\n", o.problems.size(), passed,
              o.problems.size() - passed, secs);
  aclrtResetDevice(0);
  aclFinalize();
  return passed == o.problems.size() ? 0 : driver::kExitFailed;
}
