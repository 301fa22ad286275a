// Fault injection and the control protocol served on <rundir>/<pid>.ctl:
// cable pulls, packet loss, injected completion errors, lost
// acknowledgements and device-fatal errors, per port.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

#include "simverbs.h"

namespace sv {

int parse_status(const std::string& s);

namespace {

uint64_t rnd() {
  thread_local uint64_t s = now_ns() | 1;
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

std::string gid_text(uint32_t ip) {
  char b[64];
  snprintf(b, sizeof b, "::ffff:%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
  return b;
}

std::string describe(Port* p) {
  std::string d;
  auto add = [&d](const std::string& s) { d += (d.empty() ? "" : ",") + s; };
  if (p->fatal) add("fatal");
  else if (p->down) add("port-down");
  std::lock_guard<std::mutex> g(p->mu);
  const Faults& f = p->faults;
  char b[128];
  if (f.drop_rate > 0) {
    snprintf(b, sizeof b, "drop=%g", f.drop_rate);
    add(b);
  }
  if (f.fail_status >= 0) {
    if (f.fail_after >= 0) snprintf(b, sizeof b, "fail=%s@after:%ld", status_name(f.fail_status), f.fail_after);
    else snprintf(b, sizeof b, "fail=%s@prob:%g", status_name(f.fail_status), f.fail_prob);
    add(b);
  }
  if (f.ack_every) {
    snprintf(b, sizeof b, "ack-loss=every:%u", f.ack_every);
    add(b);
  }
  return d.empty() ? "none" : d;
}

void fail_all_qps(Port* port) {
  Engine* e = Engine::get();
  std::lock_guard<std::mutex> mg(e->map_mu);
  for (auto& [qpn, qp] : e->qps) {
    if (qp->port != port) continue;
    std::lock_guard<std::mutex> g(qp->mu);
    if (qp->base()->state != IBV_QPS_RESET && qp->base()->state != IBV_QPS_ERR) {
      qp_to_error_locked(qp);
      std::lock_guard<std::mutex> pg(port->mu);  // only to a context still open
      for (Context* c : port->contexts)
        if (c == qp->ctx) post_async(c, IBV_EVENT_QP_FATAL, qp->base());
    }
  }
}

bool parse_double(const std::string& s, double lo, double hi, double* out) {
  char* end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (s.empty() || *end || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

bool parse_long(const std::string& s, long* out) {
  char* end = nullptr;
  long v = strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0) return false;
  *out = v;
  return true;
}

}  // namespace

bool inject_failure(Port* port, ibv_wc_status* status) {
  std::lock_guard<std::mutex> g(port->mu);
  Faults& f = port->faults;
  if (f.fail_status < 0) return false;
  if (f.fail_after >= 0) {
    if (f.fail_after-- > 0) return false;
    *status = ibv_wc_status(f.fail_status);
    f.fail_status = -1;  // one shot
    f.fail_after = -1;
    return true;
  }
  if (double(rnd() >> 11) / double(1ull << 53) < f.fail_prob) {
    *status = ibv_wc_status(f.fail_status);
    return true;
  }
  return false;
}

bool take_ack_loss(Port* port, bool as_target) {
  std::lock_guard<std::mutex> g(port->mu);
  Faults& f = port->faults;
  if (!f.ack_every) return false;
  uint64_t& n = as_target ? f.ack_executed : f.ack_sent;
  return ++n % f.ack_every == 0;
}

std::string run_command(const std::string& line) {
  Engine* e = Engine::get();
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  if (t.empty()) return "error: empty command\n";
  const std::string& cmd = t[0];
  if (cmd == "list") {
    std::string out;
    for (auto& p : e->ports) {
      char b[512];
      snprintf(b, sizeof b,
               "%s port 1 state %s gid %s tx_bytes %llu rx_bytes %llu tx_pkts %llu rx_pkts %llu drops %llu "
               "faults %s\n",
               p->name.c_str(), p->down ? "DOWN" : "ACTIVE", gid_text(p->ip).c_str(),
               (unsigned long long)p->tx_bytes.load(), (unsigned long long)p->rx_bytes.load(),
               (unsigned long long)p->tx_pkts.load(), (unsigned long long)p->rx_pkts.load(),
               (unsigned long long)p->drops.load(), describe(p.get()).c_str());
      out += b;
    }
    return out + "ok\n";
  }
  static const char* const kCmds[] = {"port-down", "port-up", "drop", "fail", "ack-loss", "fatal", "clear"};
  bool known = false;
  for (auto* c : kCmds) known |= cmd == c;
  if (!known) return "error: unknown command '" + cmd + "'\n";
  if (t.size() < 2) return "error: " + cmd + ": missing device name\n";
  Port* p = e->port_by_name(t[1]);
  if (!p) {
    std::string names;
    for (auto& q : e->ports) names += (names.empty() ? "" : ", ") + q->name;
    return "error: no device '" + t[1] + "' in process " + std::to_string(getpid()) + " (devices: " + names + ")\n";
  }
  const std::string& dev = t[1];
  if (cmd == "port-down" && t.size() == 2) {
    bool was = p->down.exchange(true);
    if (!was) port_event(p, IBV_EVENT_PORT_ERR);
    return dev + " port 1 down (traffic through it is lost)\nok\n";
  }
  if (cmd == "port-up" && t.size() == 2) {
    if (p->fatal) return "error: " + dev + " had a fatal error; use clear\n";
    bool was = p->down.exchange(false);
    if (was) port_event(p, IBV_EVENT_PORT_ACTIVE);
    return dev + " port 1 active\nok\n";
  }
  if (cmd == "drop" && t.size() == 3) {
    double r;
    if (!parse_double(t[2], 0, 1, &r)) return "error: drop rate must be a number in 0..1, got '" + t[2] + "'\n";
    std::lock_guard<std::mutex> g(p->mu);
    p->faults.drop_rate = r;
    return dev + " drops " + t[2] + " of its packets\nok\n";
  }
  if (cmd == "fail" && t.size() == 3 && t[2] == "off") {
    std::lock_guard<std::mutex> g(p->mu);
    p->faults.fail_status = -1;
    return dev + " fail injection off\nok\n";
  }
  if (cmd == "fail" && t.size() >= 5) {
    // the status name may contain spaces (ibv_wc_status_str text)
    std::string mode = t[t.size() - 2], arg = t.back(), name;
    for (size_t i = 2; i + 2 < t.size(); i++) name += (name.empty() ? "" : " ") + t[i];
    int st = parse_status(name);
    if (st < 0) return "error: unknown ibv_wc_status '" + name + "'\n";
    std::lock_guard<std::mutex> g(p->mu);
    if (mode == "after") {
      long n;
      if (!parse_long(arg, &n)) return "error: after needs a count >= 0, got '" + arg + "'\n";
      p->faults.fail_status = st;
      p->faults.fail_after = n;
      p->faults.fail_prob = 0;
      return dev + " next send completion after " + arg + " gets " + status_name(st) + "\nok\n";
    }
    if (mode == "prob") {
      double pr;
      if (!parse_double(arg, 0, 1, &pr)) return "error: prob must be in 0..1, got '" + arg + "'\n";
      p->faults.fail_status = st;
      p->faults.fail_after = -1;
      p->faults.fail_prob = pr;
      return dev + " send completions get " + status_name(st) + " with probability " + arg + "\nok\n";
    }
    return "error: fail: expected 'after N' or 'prob P'\n";
  }
  if (cmd == "ack-loss" && t.size() == 3 && t[2] == "off") {
    std::lock_guard<std::mutex> g(p->mu);
    p->faults.ack_every = 0;
    return dev + " ack-loss off\nok\n";
  }
  if (cmd == "ack-loss" && t.size() == 4 && t[2] == "every") {
    long n;
    if (!parse_long(t[3], &n) || n < 1) return "error: every needs a count >= 1, got '" + t[3] + "'\n";
    std::lock_guard<std::mutex> g(p->mu);
    p->faults.ack_every = unsigned(n);
    p->faults.ack_sent = p->faults.ack_executed = 0;
    return dev + " loses the acknowledgements of every " + t[3] + "th request\nok\n";
  }
  if (cmd == "fatal" && t.size() == 2) {
    p->fatal = true;
    p->down = true;
    port_event(p, IBV_EVENT_DEVICE_FATAL);
    fail_all_qps(p);
    return dev + " device fatal (QPs moved to error)\nok\n";
  }
  if (cmd == "clear" && t.size() == 2) {
    bool was_down = p->down;
    p->fatal = false;
    p->down = false;
    {
      std::lock_guard<std::mutex> g(p->mu);
      p->faults = Faults{};
    }
    if (was_down) port_event(p, IBV_EVENT_PORT_ACTIVE);
    return dev + " faults cleared, port active\nok\n";
  }
  return "error: bad arguments for " + cmd + "\n";
}

void apply_env_faults(const std::string& spec) {
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t semi = spec.find(';', pos);
    std::string cmd = spec.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos);
    std::string reply = run_command(cmd);
    if (reply.rfind("error:", 0) == 0 && cmd.find_first_not_of(" \t") != std::string::npos)
      fprintf(stderr, "simverbs: SIMVERBS_FAULTS: '%s': %s", cmd.c_str(), reply.c_str() + 7);
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
}

}  // namespace sv
