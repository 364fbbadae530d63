#include "npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace npy {

namespace {
constexpr char kMagic[] = "\x93NUMPY";

// The text after `'key':` in a .npy header dict, up to (not including) `end`; false if absent.
bool Field(const std::string& header, const std::string& key, char end, std::string* value) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t p = header.find(':', k);
  if (p == std::string::npos) return false;
  p = header.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos) return false;
  const char open = header[p];
  if (open == '\'' || open == '(') ++p;  // a quoted string or a tuple
  const size_t e = header.find(end, p);
  if (e == std::string::npos) return false;
  *value = header.substr(p, e - p);
  return true;
}
}  // namespace

int64_t ItemSize(const std::string& descr) {
  static const char *const k8[] = {"<f8", "<i8"}, *const k4[] = {"<f4", "<i4"},
                           *const k2[] = {"<f2", "<u2"};
  for (const char* d : k8)
    if (descr == d) return 8;
  for (const char* d : k4)
    if (descr == d) return 4;
  for (const char* d : k2)
    if (descr == d) return 2;
  if (descr == "|b1" || descr == "|u1" || descr == "|i1") return 1;
  return 0;
}

std::string Write(const std::string& path, const Array& a) {
  std::ostringstream h;
  h << "{'descr': '" << a.descr << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i)
    h << a.shape[i] << (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  h << "), }";
  std::string header = h.str();
  // magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) return "cannot create " + path + ".";
  const unsigned char version[2] = {1, 0};
  const uint16_t len = static_cast<uint16_t>(header.size());
  const unsigned char len_le[2] = {static_cast<unsigned char>(len & 0xff),
                                   static_cast<unsigned char>(len >> 8)};
  f.write(kMagic, 6);
  f.write(reinterpret_cast<const char*>(version), 2);
  f.write(reinterpret_cast<const char*>(len_le), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(a.data.data()),
          static_cast<std::streamsize>(a.data.size()));
  return f ? "" : "cannot write " + path + ".";
}

std::string Read(const std::string& path, Array* a) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open " + path + ".";
  char magic[6];
  unsigned char version[2];
  if (!f.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0 ||
      !f.read(reinterpret_cast<char*>(version), 2)) {
    return path + " is not a .npy file.";
  }
  uint32_t len = 0;
  unsigned char b[4] = {0, 0, 0, 0};
  if (version[0] == 1) {
    if (!f.read(reinterpret_cast<char*>(b), 2)) return path + " is truncated.";
    len = b[0] | (b[1] << 8);
  } else if (version[0] == 2 || version[0] == 3) {
    if (!f.read(reinterpret_cast<char*>(b), 4)) return path + " is truncated.";
    len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return path + " has .npy format version " + std::to_string(version[0]) +
           ", which is not supported.";
  }
  std::string header(len, '\0');
  if (!f.read(&header[0], len)) return path + " is truncated.";
  std::string value;
  if (!Field(header, "descr", '\'', &value)) return path + " has no descr in its header.";
  a->descr = value;
  if (ItemSize(a->descr) == 0) {
    return path + " has dtype '" + a->descr +
           "'; supported: <f4 <f2 <f8 <i8 <i4 <u2 (bf16 bits) |b1 |u1 |i1.";
  }
  if (Field(header, "fortran_order", ',', &value) && value.find("True") != std::string::npos) {
    return path + " is in Fortran order; save it in C order (np.ascontiguousarray).";
  }
  if (!Field(header, "shape", ')', &value)) return path + " has no shape in its header.";
  a->shape.clear();
  std::stringstream dims(value);
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    const size_t b0 = dim.find_first_not_of(" \t");
    if (b0 == std::string::npos) continue;  // "(5,)" ends with an empty item
    const size_t e0 = dim.find_last_not_of(" \t");
    const std::string d = dim.substr(b0, e0 - b0 + 1);
    if (d.find_first_not_of("0123456789") != std::string::npos || d.size() > 15) {
      return path + " has a bad shape (" + value + ") in its header.";
    }
    a->shape.push_back(std::stoll(d));
  }
  // The data must be in the file: bounds the allocation by the file's size.
  const std::streampos here = f.tellg();
  f.seekg(0, std::ios::end);
  const int64_t left = static_cast<int64_t>(f.tellg() - here);
  f.seekg(here);
  int64_t elems = 1;
  for (int64_t d : a->shape) {
    if (d != 0 && elems > left / d) return path + " holds fewer elements than its shape says.";
    elems *= d;
  }
  if (elems * ItemSize(a->descr) > left) return path + " holds fewer elements than its shape says.";
  a->data.resize(static_cast<size_t>(elems * ItemSize(a->descr)));
  if (!f.read(reinterpret_cast<char*>(a->data.data()),
              static_cast<std::streamsize>(a->data.size()))) {
    return path + " holds fewer elements than its shape says.";
  }
  return "";
}

}  // namespace npy
