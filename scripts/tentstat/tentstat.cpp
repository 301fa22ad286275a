// tentstat: the rails of every tent process on this host, read from their
// stats segments (stats_enable). See tentstat(1).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "config/config.h"
#include "metrics/prometheus_text.h"
#include "tentstat/collect.h"
#include "tentstat/output.h"
#include "tentstat/render.h"

using namespace tent;
using namespace tent::tentstat;

namespace {

const char kUsage[] =
    "usage: tentstat [options] [PID]\n"
    "Shows every tent process on this host that publishes stats (stats_enable,\n"
    "on by default)\n"
    "and each of its rails: state, time left of a pause, health, bytes, bytes/s,\n"
    "operations, errors, failovers from and to it, pauses in a row, last error.\n"
    "\n"
    "  PID                 only this process\n"
    "  -w, --watch         refresh in place like top; q quits\n"
    "  -i, --interval S    seconds between refreshes, textfile writes or JSON\n"
    "                      snapshots (default 2)\n"
    "  -n, --count N       stop after N screens or writes (default: never)\n"
    "  --json              one snapshot as JSON; with -n, N snapshots one a line\n"
    "                      (until PID, if given, is gone)\n"
    "  --prometheus        one snapshot in Prometheus text format\n"
    "  --textfile-dir DIR  keep DIR/tent.prom current for node_exporter's textfile\n"
    "                      collector (written atomically every interval)\n"
    "  --prefix NAME       shared-memory prefix of the segments (default: the\n"
    "                      stats_shm_prefix knob, /tent-stats)\n"
    "  -h, --help          this text\n"
    "\n"
    "A segment left by a process that exited is shown as gone and removed.\n"
    "Exit status: 0, or 1 when PID publishes no stats or an option is wrong.\n"
    "See tentstat(1), tent(7).\n";

int usage_error(const std::string& what) {
    std::fprintf(stderr, "tentstat: %s\n%s", what.c_str(), kUsage);
    return 1;
}

bool parse_number(const char* text, double& out) {
    char* end = nullptr;
    out = std::strtod(text, &end);
    return end != text && *end == '\0';
}

// --json -n N: a snapshot a line, every interval, until N are printed or
// the one process asked for (once seen) is gone.
template <typename Entries>
int json_lines(const Entries& entries, bool one_pid, double interval, long count) {
    bool seen = false;
    for (long i = 0; i < count; ++i) {
        if (i) std::this_thread::sleep_for(std::chrono::duration<double>(interval));
        const auto now = wall_now_ns();
        const auto found = entries();
        bool live = false;
        for (const auto& e : found) live = live || e.kind == ProcessEntry::Kind::Live;
        if (one_pid && seen && !live) break;
        seen = seen || live;
        std::fputs(render_json(found, now).c_str(), stdout);
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    enum class Mode { Screen, Watch, Json, Prometheus, Textfile } mode = Mode::Screen;
    double interval = 2;
    long count = 0;
    std::string dir, prefix;
    std::optional<long> pid;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)name;
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "-w" || a == "--watch") {
            mode = Mode::Watch;
        } else if (a == "--json") {
            mode = Mode::Json;
        } else if (a == "--prometheus") {
            mode = Mode::Prometheus;
        } else if (a == "-i" || a == "--interval") {
            const char* v = value("interval");
            if (!v || !parse_number(v, interval) || interval < 0.001 || interval > 86400)
                return usage_error(a + " needs a number of seconds from 0.1 (0.001 with --json) to 86400");
        } else if (a == "-n" || a == "--count") {
            double n;
            const char* v = value("count");
            if (!v || !parse_number(v, n) || n < 1 || n != static_cast<long>(n))
                return usage_error(a + " needs a positive whole number");
            count = static_cast<long>(n);
        } else if (a == "--textfile-dir") {
            const char* v = value("textfile-dir");
            if (!v) return usage_error("--textfile-dir needs a directory");
            dir = v;
            mode = Mode::Textfile;
        } else if (a == "--prefix") {
            const char* v = value("prefix");
            if (!v) return usage_error("--prefix needs a shared-memory name");
            prefix = v;
        } else if (!a.empty() && a.find_first_not_of("0123456789") == std::string::npos && a.size() < 10) {
            pid = std::stol(a);
        } else {
            return usage_error("unknown argument '" + a + "'");
        }
    }
    // Screens and files that fast help nobody; a JSON stream samples progress.
    if (interval < 0.1 && mode != Mode::Json)
        return usage_error("-i needs a number of seconds from 0.1 (0.001 with --json) to 86400");
    if (prefix.empty()) {
        LoadResult loaded = load_config();
        for (const auto& d : loaded.diagnostics)
            std::fprintf(stderr, "tentstat: %s: %s\n",
                         d.severity == Diagnostic::Severity::Error ? "error" : "warning", d.message.c_str());
        if (!loaded.ok()) return 1;
        prefix = loaded.config.get_string(Knob::StatsShmPrefix);
    }
    if (!dir.empty() && ::access(dir.c_str(), W_OK) != 0)
        return usage_error("--textfile-dir " + dir + ": " + std::strerror(errno));

    auto entries = [&] { return collect(prefix, pid); };
    switch (mode) {
    case Mode::Watch:
        return watch([&](std::size_t width) { return render_screen(entries(), wall_now_ns(), width); }, interval,
                     count);
    case Mode::Textfile:
        return keep_textfile([&] { return render_prometheus(prometheus_snapshot(entries())); }, dir, interval, count);
    case Mode::Json:
        if (count > 0) return json_lines(entries, pid.has_value(), interval, count);
        break;
    default: break;
    }
    const auto now = wall_now_ns();
    const auto found = entries();
    if (mode == Mode::Json)
        std::fputs(render_json(found, now).c_str(), stdout);
    else if (mode == Mode::Prometheus)
        std::fputs(render_prometheus(prometheus_snapshot(found)).c_str(), stdout);
    else
        std::fputs(render_screen(found, now, 80).c_str(), stdout);
    if (pid && found.empty()) {
        std::fprintf(stderr, "tentstat: pid %ld publishes no stats under %s (is stats_enable on?)\n", *pid,
                     prefix.c_str());
        return 1;
    }
    return 0;
}
