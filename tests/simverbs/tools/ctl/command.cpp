#include "ctl/command.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace simverbs::ctl {

using tent::Code;
using tent::Result;
using tent::Status;

namespace {

// The names come from the installed verbs.h enum, so a renamed or removed
// status breaks the build instead of silently drifting.
#define SV_WC(name) {name, #name}
struct WcName {
    ibv_wc_status value;
    const char* name;
};
constexpr WcName kWcNames[] = {
    SV_WC(IBV_WC_SUCCESS),          SV_WC(IBV_WC_LOC_LEN_ERR),
    SV_WC(IBV_WC_LOC_QP_OP_ERR),    SV_WC(IBV_WC_LOC_EEC_OP_ERR),
    SV_WC(IBV_WC_LOC_PROT_ERR),     SV_WC(IBV_WC_WR_FLUSH_ERR),
    SV_WC(IBV_WC_MW_BIND_ERR),      SV_WC(IBV_WC_BAD_RESP_ERR),
    SV_WC(IBV_WC_LOC_ACCESS_ERR),   SV_WC(IBV_WC_REM_INV_REQ_ERR),
    SV_WC(IBV_WC_REM_ACCESS_ERR),   SV_WC(IBV_WC_REM_OP_ERR),
    SV_WC(IBV_WC_RETRY_EXC_ERR),    SV_WC(IBV_WC_RNR_RETRY_EXC_ERR),
    SV_WC(IBV_WC_LOC_RDD_VIOL_ERR), SV_WC(IBV_WC_REM_INV_RD_REQ_ERR),
    SV_WC(IBV_WC_REM_ABORT_ERR),    SV_WC(IBV_WC_INV_EECN_ERR),
    SV_WC(IBV_WC_INV_EEC_STATE_ERR), SV_WC(IBV_WC_FATAL_ERR),
    SV_WC(IBV_WC_RESP_TIMEOUT_ERR), SV_WC(IBV_WC_GENERAL_ERR),
    SV_WC(IBV_WC_TM_ERR),           SV_WC(IBV_WC_TM_RNDV_INCOMPLETE),
};
#undef SV_WC

Status bad(const std::string& message) { return Status(Code::InvalidArgument, message); }

Result<pid_t> parse_pid(const std::string& s) {
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0 || v <= 0 || v > 0x3fffffff)
        return bad("'" + s + "' is not a process id");
    return static_cast<pid_t>(v);
}

// A probability or loss rate: a decimal number in [0, 1].
Result<double> parse_fraction(const std::string& what, const std::string& s) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0.0 || v > 1.0)
        return bad(what + " must be a number from 0 to 1, not '" + s + "'");
    return v;
}

Result<unsigned long> parse_count(const std::string& what, const std::string& s) {
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || *end != '\0' || errno != 0 || v == 0)
        return bad(what + " must be a positive integer, not '" + s + "'");
    return v;
}

std::string join(const std::vector<std::string>& words, size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i) {
        if (!out.empty()) out += ' ';
        out += words[i];
    }
    return out;
}

bool valid_device_name(const std::string& dev) {
    if (dev.empty() || dev.size() > 63) return false;
    for (char c : dev)
        if (c <= ' ' || c > '~') return false;
    return true;
}

// fail PID DEV STATUS --after N | --prob P | off
Result<Command> parse_fail(Command c, const std::vector<std::string>& a) {
    if (a.size() == 4 && a[3] == "off") {
        c.line = "fail " + c.device + " off";
        c.done = "completion failures off";
        return c;
    }
    // STATUS may be the multi-word ibv_wc_status_str text: everything up to the option.
    size_t opt = 3;
    while (opt < a.size() && a[opt] != "--after" && a[opt] != "--prob") ++opt;
    if (opt == 3) return bad("fail: missing STATUS (an ibv_wc_status name such as IBV_WC_RETRY_EXC_ERR)");
    if (opt + 2 != a.size()) return bad("fail: expected STATUS --after N or STATUS --prob P, or off");
    std::string status = join(a, 3, opt);
    if (status.rfind("IBV_WC_", 0) == 0 && !is_wc_status_name(status))
        return bad("fail: unknown completion status '" + status + "'");
    if (status == "IBV_WC_SUCCESS" || status == "success")
        return bad("fail: IBV_WC_SUCCESS is not a failure");
    if (a[opt] == "--after") {
        auto n = parse_count("fail --after", a[opt + 1]);
        if (!n) return n.status();
        c.line = "fail " + c.device + " " + status + " after " + a[opt + 1];
        c.done = "next completion after " + a[opt + 1] + " fails with " + status;
    } else {
        auto p = parse_fraction("fail --prob", a[opt + 1]);
        if (!p) return p.status();
        c.line = "fail " + c.device + " " + status + " prob " + a[opt + 1];
        c.done = "completions fail with " + status + " with probability " + a[opt + 1];
    }
    return c;
}

// ack-loss PID DEV --every N | off
Result<Command> parse_ack_loss(Command c, const std::vector<std::string>& a) {
    if (a.size() == 4 && a[3] == "off") {
        c.line = "ack-loss " + c.device + " off";
        c.done = "acknowledgement loss off";
        return c;
    }
    if (a.size() != 5 || a[3] != "--every") return bad("ack-loss: expected --every N or off");
    auto n = parse_count("ack-loss --every", a[4]);
    if (!n) return n.status();
    c.line = "ack-loss " + c.device + " every " + a[4];
    c.done = "acknowledgement lost for 1 in " + a[4] + " delivered messages";
    return c;
}

} // namespace

const std::vector<std::string>& wc_status_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& w : kWcNames) v.emplace_back(w.name);
        return v;
    }();
    return names;
}

bool is_wc_status_name(const std::string& name) {
    for (const auto& w : kWcNames)
        if (name == w.name) return true;
    return false;
}

Result<Command> parse_command(const std::vector<std::string>& a) {
    if (a.empty()) return bad("missing command (try --help)");
    const std::string& verb = a[0];
    Command c;
    if (verb == "list") {
        if (a.size() > 2) return bad("list: expected at most one PID");
        c.kind = Command::Kind::List;
        c.line = "list";
        if (a.size() == 2) {
            auto pid = parse_pid(a[1]);
            if (!pid) return pid.status();
            c.pid = *pid;
        }
        return c;
    }

    static const char* const kPortVerbs[] = {"port-down", "port-up", "drop", "fail",
                                             "ack-loss",  "fatal",   "clear"};
    bool known = false;
    for (const char* v : kPortVerbs) known = known || verb == v;
    if (!known) return bad("unknown command '" + verb + "' (try --help)");
    if (a.size() < 3) return bad(verb + ": expected PID DEV");
    auto pid = parse_pid(a[1]);
    if (!pid) return pid.status();
    if (!valid_device_name(a[2])) return bad(verb + ": '" + a[2] + "' is not a device name");
    c.kind = Command::Kind::Port;
    c.pid = *pid;
    c.device = a[2];

    if (verb == "port-down" || verb == "port-up" || verb == "fatal" || verb == "clear") {
        if (a.size() != 3) return bad(verb + ": expected PID DEV and nothing more");
        c.line = verb + " " + c.device;
        if (verb == "port-down") c.done = "port down";
        if (verb == "port-up") c.done = "port up";
        if (verb == "fatal") c.done = "device fatal";
        if (verb == "clear") c.done = "faults cleared";
        return c;
    }
    if (verb == "drop") {
        if (a.size() != 4) return bad("drop: expected PID DEV RATE");
        auto rate = parse_fraction("drop RATE", a[3]);
        if (!rate) return rate.status();
        c.line = "drop " + c.device + " " + a[3];
        c.done = "packet loss rate " + a[3];
        return c;
    }
    if (verb == "fail") return parse_fail(std::move(c), a);
    return parse_ack_loss(std::move(c), a);
}

} // namespace simverbs::ctl
