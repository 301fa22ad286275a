// Environment knobs of simverbs (documented in README-knobs.txt).
#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {
std::string env_or(const char* name, const char* dflt) {
  const char* v = getenv(name);
  return (v && *v) ? std::string(v) : std::string(dflt);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}
}  // namespace

Settings read_settings() {
  Settings s;
  std::string devs = trim(env_or("SIMVERBS_DEVICES", "2"));
  char* end = nullptr;
  long n = strtol(devs.c_str(), &end, 10);
  if (end && *end == '\0' && n >= 0) {
    if (n > 16) n = 16;  // ports are numbered per process; keep addresses unique
    for (long i = 0; i < n; i++) s.devices.push_back("mlx5_" + std::to_string(i));
  } else {
    size_t pos = 0;
    while (pos <= devs.size() && s.devices.size() < 16) {
      size_t c = devs.find(',', pos);
      std::string name = trim(devs.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
      if (!name.empty() && name.size() < IBV_SYSFS_NAME_MAX) s.devices.push_back(name);
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  s.rate_gbps = strtod(env_or("SIMVERBS_PORT_RATE", "0").c_str(), nullptr);
  if (!(s.rate_gbps > 0)) s.rate_gbps = 0;
  s.delay_us = strtod(env_or("SIMVERBS_PORT_DELAY_US", "0").c_str(), nullptr);
  if (!(s.delay_us > 0)) s.delay_us = 0;
  s.fabric = env_or("SIMVERBS_FABRIC", "default");
  if (s.fabric.find('/') != std::string::npos || s.fabric == "." || s.fabric == "..") s.fabric = "default";
  s.dir = env_or("SIMVERBS_DIR", "/tmp/simverbs");
  s.faults = env_or("SIMVERBS_FAULTS", "");
  std::string addrs = env_or("SIMVERBS_PORT_ADDRESSES", "");
  for (size_t pos = 0; !addrs.empty() && pos <= addrs.size();) {
    size_t c = addrs.find(',', pos);
    std::string a = trim(addrs.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    in_addr in{};
    if (inet_pton(AF_INET, a.c_str(), &in) != 1 || in.s_addr == 0) {
      s.bad_port_addresses = a;
      break;
    }
    s.port_addresses.push_back(ntohl(in.s_addr));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return s;
}

}  // namespace sv
