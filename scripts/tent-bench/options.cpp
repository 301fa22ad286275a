#include "tent-bench/options.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tent_bench {

namespace {

const char* const kUsage =
    "usage: tent-bench (--listen | --connect) HOST:PORT [OPTIONS]\n"
    "\n"
    "Measures tent between two processes: the server (--listen) offers memory\n"
    "and receives messages, the client (--connect) drives the operations.\n"
    "The client's options decide the run; the server takes them over.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT   serve one client (port 0 picks a free port)\n"
    "  --connect HOST:PORT  run against a server\n"
    "  --op write|read|send operation (default write)\n"
    "  --size BYTES         bytes per operation, K/M/G suffixes (default 64K)\n"
    "  --iters N            operations to complete\n"
    "  --duration SECS      or: post operations for this long (default 1 s);\n"
    "                       SIGUSR1 to the client ends the run sooner\n"
    "  --depth N            operations in flight (default 8); with all of them\n"
    "                       in flight the client sleeps in tent_wait()\n"
    "  --rails LIST         comma-separated: tcp, tcp:ADDR, HCA device names\n"
    "  --priority P         high, medium or low (default medium)\n"
    "  --check              verify every byte written, read or received\n"
    "  --verify-writes      with --op write: --check, and every write is checked\n"
    "                       at its target before its slot is written again\n"
    "  --reuse-buffer       every operation uses the same buffer, as ib_write_bw\n"
    "                       does (not with --check)\n"
    "  --json               print one JSON object with the results\n"
    "  --config FILE        tent configuration file read last\n"
    "  --stats-interval MS  every MS ms, one line per rail on stderr:\n"
    "                       tent-bench: stats t_ms=T rail=NAME bytes=N state=S failovers=N\n"
    "\n"
    "background stream (client; runs with the measured one, same engines):\n"
    "  --background-op write|read  start it with this operation\n"
    "  --background-size BYTES     bytes per operation (default 1M)\n"
    "  --background-depth N        operations in flight (default 8)\n"
    "  --background-priority P     high, medium or low (default low)\n"
    "The measured stream starts once the background stream has completed its\n"
    "first operation, and the background stops when the measured stream ends.\n"
    "  -h, --help           print this help\n"
    "\n"
    "Exits 0 when every operation succeeded and every checked byte matched.\n"
    "See tent-bench(1).\n";

bool parse_size(const char* s, std::uint64_t& out) {
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return false;
    std::uint64_t mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1ull << 10, ++end;
    else if (*end == 'M' || *end == 'm') mult = 1ull << 20, ++end;
    else if (*end == 'G' || *end == 'g') mult = 1ull << 30, ++end;
    if (*end) return false;
    if (v > (~0ull) / mult) return false;
    out = v * mult;
    return true;
}

bool parse_endpoint(const char* s, std::string& host, std::uint16_t& port) {
    const char* colon = std::strrchr(s, ':');
    if (!colon || colon == s) return false;
    std::uint64_t p = 0;
    if (!parse_size(colon + 1, p) || p > 65535 || !std::isdigit(static_cast<unsigned char>(colon[1])))
        return false;
    host.assign(s, colon);
    port = static_cast<std::uint16_t>(p);
    return true;
}

bool parse_priority(const std::string& s, tent_priority_t& out) {
    if (s == "high") out = TENT_PRIORITY_HIGH;
    else if (s == "medium") out = TENT_PRIORITY_MEDIUM;
    else if (s == "low") out = TENT_PRIORITY_LOW;
    else return false;
    return true;
}

bool parse_count(const char* s, std::uint64_t max, std::uint32_t& out) {
    std::uint64_t v = 0;
    if (!parse_size(s, v) || v == 0 || v > max) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

} // namespace

const char* op_name(Op op) {
    switch (op) {
    case Op::Write: return "write";
    case Op::Read: return "read";
    case Op::Send: return "send";
    }
    return "?";
}

bool parse_options(int argc, char** argv, Options& o, std::string& message, int& exit_code) {
    exit_code = 2;
    bool have_endpoint = false;
    bool background_detail = false;  // a --background-* option other than --background-op
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char*& v) {
            if (i + 1 >= argc) {
                message = "tent-bench: " + a + " needs a value\n";
                return false;
            }
            v = argv[++i];
            return true;
        };
        const char* v = nullptr;
        if (a == "-h" || a == "--help") {
            message = kUsage;
            exit_code = 0;
            return false;
        } else if (a == "--listen" || a == "--connect") {
            if (!value(v)) return false;
            if (have_endpoint) {
                message = "tent-bench: give one of --listen and --connect\n";
                return false;
            }
            if (!parse_endpoint(v, o.host, o.port)) {
                message = "tent-bench: " + a + " wants HOST:PORT, not '" + v + "'\n";
                return false;
            }
            o.listen = a == "--listen";
            have_endpoint = true;
        } else if (a == "--op") {
            if (!value(v)) return false;
            std::string s = v;
            if (s == "write") o.op = Op::Write;
            else if (s == "read") o.op = Op::Read;
            else if (s == "send") o.op = Op::Send;
            else {
                message = "tent-bench: --op is write, read or send, not '" + s + "'\n";
                return false;
            }
        } else if (a == "--size") {
            if (!value(v)) return false;
            if (!parse_size(v, o.size) || o.size == 0 || o.size > (1ull << 32)) {
                message = std::string("tent-bench: --size wants 1 B to 4 GiB, not '") + v + "'\n";
                return false;
            }
        } else if (a == "--iters") {
            if (!value(v)) return false;
            if (!parse_size(v, o.iters) || o.iters == 0) {
                message = std::string("tent-bench: --iters wants a positive count, not '") + v + "'\n";
                return false;
            }
        } else if (a == "--duration") {
            if (!value(v)) return false;
            char* end = nullptr;
            o.duration_secs = std::strtod(v, &end);
            if (end == v || *end || !(o.duration_secs > 0) || o.duration_secs > 86400) {
                message = std::string("tent-bench: --duration wants seconds (0 < s <= 86400), not '") + v + "'\n";
                return false;
            }
        } else if (a == "--depth" || a == "--background-depth") {
            if (!value(v)) return false;
            if (!parse_count(v, kMaxDepth, a == "--depth" ? o.depth : o.background_depth)) {
                message = "tent-bench: " + a + " wants 1 to " + std::to_string(kMaxDepth) + ", not '" + v + "'\n";
                return false;
            }
            if (a != "--depth") background_detail = true;
        } else if (a == "--background-op") {
            if (!value(v)) return false;
            std::string s = v;
            if (s == "write") o.background_op = Op::Write;
            else if (s == "read") o.background_op = Op::Read;
            else {
                message = "tent-bench: --background-op is write or read, not '" + s + "'\n";
                return false;
            }
            o.background = true;
        } else if (a == "--background-size") {
            if (!value(v)) return false;
            if (!parse_size(v, o.background_size) || o.background_size == 0 || o.background_size > (1ull << 32)) {
                message = std::string("tent-bench: --background-size wants 1 B to 4 GiB, not '") + v + "'\n";
                return false;
            }
            background_detail = true;
        } else if (a == "--background-priority") {
            if (!value(v)) return false;
            if (!parse_priority(v, o.background_priority)) {
                message = std::string("tent-bench: --background-priority is high, medium or low, not '") + v + "'\n";
                return false;
            }
            background_detail = true;
        } else if (a == "--stats-interval") {
            if (!value(v)) return false;
            if (!parse_count(v, 3600000, o.stats_interval_ms)) {
                message = std::string("tent-bench: --stats-interval wants 1 to 3600000 ms, not '") + v + "'\n";
                return false;
            }
        } else if (a == "--rails") {
            if (!value(v)) return false;
            o.rails = split(v);
            if (o.rails.empty()) {
                message = "tent-bench: --rails wants a list such as tcp or mlx5_0,mlx5_1\n";
                return false;
            }
        } else if (a == "--priority") {
            if (!value(v)) return false;
            if (!parse_priority(v, o.priority)) {
                message = std::string("tent-bench: --priority is high, medium or low, not '") + v + "'\n";
                return false;
            }
        } else if (a == "--check") {
            o.check = true;
        } else if (a == "--verify-writes") {
            o.check = o.verify_writes = true;
        } else if (a == "--reuse-buffer") {
            o.reuse_buffer = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--config") {
            if (!value(v)) return false;
            o.config = v;
        } else {
            message = "tent-bench: unknown option '" + a + "' (see --help)\n";
            return false;
        }
    }
    if (!have_endpoint) {
        message = std::string("tent-bench: give --listen HOST:PORT or --connect HOST:PORT\n\n") + kUsage;
        return false;
    }
    if (o.iters && o.duration_secs > 0) {
        message = "tent-bench: give --iters or --duration, not both\n";
        return false;
    }
    if (!o.iters && !(o.duration_secs > 0)) o.duration_secs = 1;
    if (background_detail && !o.background) {
        message = "tent-bench: the --background-* options need --background-op\n";
        return false;
    }
    if (o.verify_writes && (o.listen || o.op != Op::Write)) {
        message = "tent-bench: --verify-writes is a client option for --op write\n";
        return false;
    }
    if (o.reuse_buffer && o.check) {
        message = "tent-bench: --reuse-buffer and --check do not go together: checking needs a buffer per "
                  "operation in flight\n";
        return false;
    }
    if (o.reuse_buffer && o.listen) {
        message = "tent-bench: --reuse-buffer is a client option\n";
        return false;
    }
    if (o.background && o.listen) {
        message = "tent-bench: --background-op is a client option (the server takes it over)\n";
        return false;
    }
    // The transport hint follows the kinds of rails named.
    bool tcp = false, hca = false;
    for (auto& r : o.rails) (r == "tcp" || r.rfind("tcp:", 0) == 0 ? tcp : hca) = true;
    o.hint = tcp && !hca ? TENT_TRANSPORT_TCP : hca && !tcp ? TENT_TRANSPORT_RDMA : TENT_TRANSPORT_ANY;
    return true;
}

} // namespace tent_bench
