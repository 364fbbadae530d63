// Reads the PyTorch fixtures written by tools/make_torch_fixtures.py.
#ifndef ACLNN_CPU_TESTS_SUPPORT_FIXTURE_H_
#define ACLNN_CPU_TESTS_SUPPORT_FIXTURE_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace testing_support {

struct Fixture {
  std::map<std::string, std::string> header;
  std::map<std::string, std::vector<double>> arrays;
  std::string Get(const std::string& k) const {
    auto it = header.find(k);
    return it == header.end() ? std::string() : it->second;
  }
  int64_t Int(const std::string& k) const { return std::stoll(Get(k)); }
  double Num(const std::string& k) const { return std::stod(Get(k)); }
};

// Empty header on failure.
inline Fixture LoadFixture(const std::string& path) {
  Fixture f;
  std::ifstream in(path, std::ios::binary);
  if (!in) return f;
  std::string line;
  std::getline(in, line);
  std::istringstream words(line);
  std::string w;
  while (words >> w) {
    const size_t eq = w.find('=');
    if (eq != std::string::npos) f.header[w.substr(0, eq)] = w.substr(eq + 1);
  }
  std::istringstream list(f.Get("arrays"));
  std::string item;
  while (std::getline(list, item, ',')) {
    const size_t colon = item.find(':');
    const std::string name = item.substr(0, colon);
    const size_t count = std::stoul(item.substr(colon + 1));
    std::vector<double> v(count);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * 8));
    f.arrays[name] = std::move(v);
  }
  if (!in) f.header.clear();
  return f;
}

inline std::string FixturePath(const std::string& name) {
  return std::string(ACLNN_CPU_TEST_DATA_DIR) + "/" + name;
}

}  // namespace testing_support

#endif  // ACLNN_CPU_TESTS_SUPPORT_FIXTURE_H_
