#include "problem.h"

#include <cctype>
#include <map>
#include <sstream>

namespace driver {

namespace {

const std::map<std::string, Op>& OpNames() {
  static const std::map<std::string, Op> m = {
      {"log_softmax_backward", Op::kLogSoftmaxBackward},
      {"lsm_bwd", Op::kLogSoftmaxBackward},
      {"log_softmax", Op::kLogSoftmax},
      {"lsm", Op::kLogSoftmax},
      {"cross_entropy_loss_grad", Op::kCrossEntropyLossGrad},
      {"ce_grad", Op::kCrossEntropyLossGrad},
      {"cross_entropy_loss", Op::kCrossEntropyLoss},
      {"ce", Op::kCrossEntropyLoss}};
  return m;
}

const std::map<std::string, aclDataType>& FloatDtypes() {
  static const std::map<std::string, aclDataType> m = {
      {"f32", ACL_FLOAT}, {"f16", ACL_FLOAT16}, {"bf16", ACL_BF16}, {"f64", ACL_DOUBLE}};
  return m;
}

const std::map<std::string, aclDataType>& TargetDtypes() {
  static const std::map<std::string, aclDataType> m = {{"s64", ACL_INT64}, {"s32", ACL_INT32}};
  return m;
}

// "4096x32000", "1", or "scalar" (rank 0).
std::string ParseShape(const std::string& s, std::vector<int64_t>* shape) {
  shape->clear();
  if (s == "scalar") return "";
  const std::string bad = "--shape " + s +
                          ": dims are non-negative integers joined by 'x' (e.g. 4096x32000), "
                          "or 'scalar'.";
  if (s.empty() || s.back() == 'x') return bad;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (...) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < 0) return bad;
    shape->push_back(v);
  }
  if (shape->size() > 8) return "--shape " + s + ": rank must be 1 to 8.";
  return "";
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace

const char* OpName(Op op) {
  static const char* const kNames[] = {"log_softmax_backward", "log_softmax",
                                       "cross_entropy_loss_grad", "cross_entropy_loss"};
  return kNames[static_cast<int>(op)];
}

const char* DtypeName(aclDataType t) {
  for (const auto* names : {&FloatDtypes(), &TargetDtypes()}) {
    for (const auto& kv : *names) {
      if (kv.second == t) return kv.first.c_str();
    }
  }
  return "?";
}

// An option whose value is one of the names in `names` (case-insensitive).
template <typename T>
CLI::Option* AddNamed(CLI::App& app, const std::string& flag, T& out,
                      const std::map<std::string, T>& names, const std::string& help,
                      const std::string& type) {
  return app
      .add_option_function<std::string>(
          flag,
          [flag, &out, &names](const std::string& value) {
            std::string key = value;
            for (char& ch : key)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            const auto it = names.find(key);
            if (it == names.end()) {
              std::string known;
              for (const auto& kv : names) known += (known.empty() ? "" : ", ") + kv.first;
              throw CLI::ValidationError(flag + " " + value + " is not one of: " + known + ".");
            }
            out = it->second;
          },
          help)
      ->type_name(type);
}

void AddProblemOptions(CLI::App& app, Problem& p) {
  AddNamed(app, "--op", p.op, OpNames(),
           "operator: log_softmax_backward (lsm_bwd), log_softmax (lsm), "
           "cross_entropy_loss_grad (ce_grad), cross_entropy_loss (ce)",
           "OP");
  app.add_option_function<std::string>(
         "--shape",
         [&p](const std::string& s) {
           const std::string err = ParseShape(s, &p.shape);
           if (!err.empty()) throw CLI::ValidationError(err);
         },
         "dims joined by 'x' (LogSoftmax*: any rank, 'scalar' for 0-d; CrossEntropy*: NxC)")
      ->type_name("SHAPE");
  AddNamed(app, "--dtype", p.dtype, FloatDtypes(),
           "input dtype: f32 f16 bf16 (f64 for log_softmax)", "DTYPE");
  AddNamed(app, "--out-dtype", p.out_dtype, FloatDtypes(),
           "output dtype of the LogSoftmax operators (default: --dtype)", "DTYPE");
  AddNamed(app, "--target-dtype", p.target_dtype, TargetDtypes(), "target dtype: s64 s32", "DTYPE");
  app.add_option("--dim", p.dim, "reduction dim of the LogSoftmax operators");
  app.add_option("--reduction", p.reduction, "none, mean or sum")
      ->check(CLI::IsMember({"none", "mean", "sum"}));
  app.add_flag("--weight,!--no-weight", p.weight, "per-class weights (uniform in [0.5, 2))");
  app.add_option("--ignore-index", p.ignore_index, "ignoreIndex (one row in seven gets it)");
  app.add_option("--label-smoothing", p.label_smoothing, "labelSmoothing in [0, 1]");
  app.add_option("--zloss", p.zloss, "lseSquareScaleForZloss (z-loss on when non-zero)");
  app.add_option("--layout", p.layout,
                 "every tensor: contiguous, transposed (reversed strides), offset (storage "
                 "offset 7), padded (strides of a larger tensor plus offset)")
      ->check(CLI::IsMember({"contiguous", "transposed", "offset", "padded"}));
  app.add_option("--threads", p.threads, "threads (default: ACLNN_CPU_NUM_THREADS or all cores)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--cpu-target", p.target,
                 "run on this Highway target (e.g. AVX3, AVX2, SSE4, SCALAR); default: the best");
  app.add_option("--seed", p.seed, "random data seed");
}

bool IsProblemOption(const std::string& flag) {
  CLI::App app("problem");
  Problem p;
  AddProblemOptions(app, p);
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_name() == flag) return true;
  }
  return false;
}

std::string Validate(const Problem& p) {
  if (p.IsCrossEntropy()) {
    if (p.shape.size() != 2) {
      return std::string("--op ") + OpName(p.op) + " needs a 2-D --shape NxC, not " +
             ShapeString(p.shape) + ".";
    }
    if (p.dtype == ACL_DOUBLE)
      return std::string("--op ") + OpName(p.op) + " takes f32, f16 or bf16.";
  }
  if (p.op == Op::kLogSoftmaxBackward && p.dtype == ACL_DOUBLE) {
    return "--op log_softmax_backward takes f32, f16 or bf16 inputs.";
  }
  return "";
}

std::string Problem::ToString() const {
  std::ostringstream s;
  s << "--op=" << OpName(op) << " --shape=" << ShapeString(shape)
    << " --dtype=" << DtypeName(dtype);
  if (IsCrossEntropy()) {
    s << " --reduction=" << reduction << (weight ? " --weight" : "")
      << " --ignore-index=" << ignore_index << " --label-smoothing=" << label_smoothing
      << " --zloss=" << zloss << " --target-dtype=" << DtypeName(target_dtype);
  } else {
    s << " --out-dtype=" << DtypeName(OutDtype()) << " --dim=" << dim;
  }
  if (layout != "contiguous") s << " --layout=" << layout;
  if (threads > 0) s << " --threads=" << threads;
  if (!target.empty()) s << " --cpu-target=" << target;
  if (seed != 1) s << " --seed=" << seed;
  return s.str();
}

std::string ParseLine(const std::string& line, Problem* p) {
  *p = Problem{};
  CLI::App app("problem");
  AddProblemOptions(app, *p);
  try {
    app.parse(line, false);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return Validate(*p);
}

}  // namespace driver
