#include "fatbin/cuobjdump_reader.h"

#include <array>
#include <cstdio>
#include <memory>
#include <regex>
#include <sstream>

namespace gvirtus::fatbin::test {

std::optional<std::string> run_command(const std::string& command) {
  struct Closer {
    int* status;
    void operator()(FILE* f) const { *status = pclose(f); }
  };
  int status = -1;
  std::string out;
  {
    std::unique_ptr<FILE, Closer> pipe(popen(command.c_str(), "r"), Closer{&status});
    if (!pipe) return std::nullopt;
    std::array<char, 4096> buffer;
    for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0;) {
      out.append(buffer.data(), n);
    }
  }
  if (status != 0) return std::nullopt;
  return out;
}

std::vector<ElfTruth> parse_cuobjdump_elf(const std::string& text) {
  static const std::regex kparam(
      R"(Ordinal\s*:\s*0x([0-9a-f]+)\s+Offset\s*:\s*0x([0-9a-f]+)\s+Size\s*:\s*0x([0-9a-f]+))");
  static const std::regex value(R"(Value:\s*0x([0-9a-f]+))");
  std::vector<ElfTruth> elfs;
  KernelLayout* kernel = nullptr;
  std::map<uint32_t, ParamInfo> params;  // of *kernel, by ordinal
  std::string attribute;
  bool in_elf = false;  // "Fatbin ptx code:" blocks also print "arch = sm_NN"
  const auto finish = [&] {
    if (kernel == nullptr) return;
    for (const auto& [ordinal, param] : params) {
      while (kernel->params.size() < ordinal) kernel->params.push_back({~0u, ~0u});  // a gap
      kernel->params.push_back(param);
    }
    kernel = nullptr;
    params.clear();
  };
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '\t' || line[0] == ' ') {
      std::smatch m;
      if (line.starts_with("\tAttribute:")) attribute = line.substr(line.find_last_of('\t') + 1);
      if (kernel == nullptr || !line.starts_with("\tValue:")) continue;
      if (attribute.starts_with("EIATTR_KPARAM_INFO") && std::regex_search(line, m, kparam)) {
        params[std::stoul(m[1], nullptr, 16)] = {
            static_cast<uint32_t>(std::stoul(m[2], nullptr, 16)),
            static_cast<uint32_t>(std::stoul(m[3], nullptr, 16))};
      } else if (attribute == "EIATTR_CBANK_PARAM_SIZE" && std::regex_search(line, m, value)) {
        kernel->param_bytes = static_cast<uint32_t>(std::stoul(m[1], nullptr, 16));
      }
      continue;
    }
    finish();
    if (line.starts_with("Fatbin ")) in_elf = line.starts_with("Fatbin elf code");
    if (in_elf && line.starts_with("arch = sm_")) {
      elfs.push_back({static_cast<uint32_t>(std::stoul(line.substr(10))), {}});
    } else if (in_elf && line.starts_with(".nv.info.") && !elfs.empty()) {
      const std::string name = line.substr(9);
      kernel = &elfs.back().kernels[name];
      *kernel = {name, {}, 0};
    }
  }
  finish();
  return elfs;
}

std::set<std::string> parse_cuobjdump_ptx_entries(const std::string& text) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\()");
  std::set<std::string> names;
  for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it) {
    names.insert((*it)[1]);
  }
  return names;
}

}  // namespace gvirtus::fatbin::test
