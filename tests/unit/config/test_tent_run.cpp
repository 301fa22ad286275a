// The built tent-run --show-config: its exit status, its report of every
// knob with value and source, and its errors on an invalid configuration.
#include <criterion/criterion.h>
#include <dlfcn.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "common/knob_table.h"
#include "test_support.h"

using namespace tent;

namespace {

struct RunResult {
    int status = -1;  // exit status, or -1 if it did not exit normally
    std::string out;
    std::string err;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs tent-run with exactly the given environment; killed after 10 s.
RunResult run_tent_run(const std::vector<std::string>& args, test::FakeEnv& env, const test::TempDir& dir) {
    std::string exe = test::builddir() + "/tent-run";
    // In a tree built with AddressSanitizer: the sanitizers' settings are
    // the test tree's, not tent's configuration, and tent-run, itself
    // instrumented, must start under an LD_PRELOAD that does not name the
    // sanitizer's runtime first (one test gives it libc.so.6).
    const char* asan = std::getenv("ASAN_OPTIONS");
    env.add(std::string("ASAN_OPTIONS=verify_asan_link_order=0") + (asan ? std::string(":") + asan : ""));
    if (const char* ubsan = std::getenv("UBSAN_OPTIONS")) env.add(std::string("UBSAN_OPTIONS=") + ubsan);
    std::string out_path = dir.path() + "/stdout", err_path = dir.path() + "/stderr";
    std::vector<char*> argv{exe.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        alarm(10);  // survives exec: a hung tent-run dies of SIGALRM
        execve(exe.c_str(), argv.data(), env.get());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    RunResult r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

} // namespace

Test(tent_run, show_config_rejects_bad_tent_config) {
    test::TempDir dir;
    std::string conf = dir.write("bad.conf", "[rail]\nrail_cooldown_secs = 30\nrail_error_threshold = lots\n");
    test::FakeEnv env{"TENT_CONFIG=" + conf, "HOME=" + dir.path()};
    RunResult r = run_tent_run({"--show-config"}, env, dir);
    cr_expect_eq(r.status, 1, "exit status %d, stderr: %s", r.status, r.err.c_str());
    std::string want = "tent-run: error: " + conf +
                       ":3: rail_error_threshold: value 'lots' is not an integer (accepted: 1..1000000)\n";
    cr_expect(r.err.find(want) != std::string::npos, "stderr was: %s", r.err.c_str());
    cr_expect(r.out.empty(), "nothing on stdout for an invalid configuration: %s", r.out.c_str());
}

Test(tent_run, show_config_rejects_bad_environment_and_missing_file) {
    test::TempDir dir;
    test::FakeEnv env{"TENT_RAIL_COOLDOWN_SECS=abc", "TENT_CONFIG=" + dir.path() + "/missing.conf",
                      "HOME=" + dir.path()};
    RunResult r = run_tent_run({"--show-config"}, env, dir);
    cr_expect_eq(r.status, 1);
    cr_expect(r.err.find("tent-run: error: TENT_RAIL_COOLDOWN_SECS=abc: rail_cooldown_secs: value 'abc' is not an "
                         "integer (accepted: 1..86400)") != std::string::npos,
              "stderr was: %s", r.err.c_str());
    cr_expect(r.err.find("cannot open " + dir.path() + "/missing.conf") != std::string::npos, "stderr was: %s",
              r.err.c_str());
}

Test(tent_run, show_config_prints_every_knob_with_value_and_source) {
    test::TempDir dir;
    std::string conf = dir.write("good.conf", "[rail]\nrail_error_treshold = 5\nrail_cooldown_secs = 40\n"
                                              "[policy big]\ntransports = rdma\nmin_size = 1M\n");
    test::FakeEnv env{"TENT_CONFIG=" + conf, "HOME=" + dir.path(), "TENT_LOG_LEVEL=info"};
    RunResult r = run_tent_run({"--show-config"}, env, dir);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err.c_str());
    // The misspelled key is a warning on stderr, with the suggestion.
    cr_expect(r.err.find("tent-run: warning: " + conf +
                         ":2: unknown key 'rail_error_treshold' in [rail] (did you mean 'rail_error_threshold'?)") !=
                  std::string::npos,
              "stderr was: %s", r.err.c_str());
    std::istringstream lines(r.out);
    std::string line;
    std::map<std::string, std::pair<std::string, std::string>> rows;  // key -> (value, source)
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string key, value, source;
        words >> key >> value;
        std::getline(words, source);
        source.erase(0, source.find_first_not_of(' '));
        rows[key] = {value, source};
    }
    for (const auto& spec : knob_table())
        cr_expect(rows.count(std::string(spec.key)), "%s missing from --show-config", std::string(spec.key).c_str());
    cr_expect(rows["rail_cooldown_secs"] == std::make_pair(std::string("40"), conf + ":3"));
    cr_expect(rows["log_level"] == std::make_pair(std::string("info"), std::string("env TENT_LOG_LEVEL")));
    cr_expect(rows["max_failover_attempts"] == std::make_pair(std::string("3"), std::string("default")));
    cr_expect(r.out.find("[policy big] " + conf + ":4\n") != std::string::npos, "stdout: %s", r.out.c_str());
    cr_expect(rows["transports"] == std::make_pair(std::string("rdma"), conf + ":5"));
}

Test(tent_run, command_is_refused_when_configuration_is_invalid) {
    test::TempDir dir;
    test::FakeEnv env{"TENT_LOG_LEVEL=loud", "HOME=" + dir.path(), "PATH=/usr/bin:/bin"};
    RunResult r = run_tent_run({"true"}, env, dir);
    cr_expect_eq(r.status, 1);
    cr_expect(r.err.find("TENT_LOG_LEVEL=loud: log_level:") != std::string::npos, "stderr was: %s", r.err.c_str());
}

namespace {

// The path of the C library's libm (any loadable library stands in for
// libtent.so in these tests).
std::string libm_path() {
    Dl_info info{};
    cr_assert(dladdr(reinterpret_cast<void*>(&::cbrt), &info) != 0 && info.dli_fname, "cannot find libm");
    return info.dli_fname;
}

} // namespace

Test(tent_run, command_runs_with_tent_library_preloaded_first) {
    test::TempDir dir;
    // Under the name the library activates with (libtent.so*).
    std::string lib = dir.path() + "/libtent.so.0";
    cr_assert_eq(symlink(libm_path().c_str(), lib.c_str()), 0);
    std::string conf = dir.write("warn.conf", "[rail]\nrail_cooldown_sec = 5\n");
    test::FakeEnv env{"TENT_LIBRARY=" + lib, "LD_PRELOAD=libc.so.6", "TENT_CONFIG=" + conf, "HOME=" + dir.path(),
                      "PATH=/usr/bin:/bin"};
    RunResult r = run_tent_run({"sh", "-c", "printf %s \"$LD_PRELOAD\"; exit 7"}, env, dir);
    cr_expect_eq(r.status, 7, "the command's exit status is passed on; stderr: %s", r.err.c_str());
    std::string want = lib + ":libc.so.6";
    cr_expect_str_eq(r.out.c_str(), want.c_str());
    // A warning does not stop the command, but it is shown.
    cr_expect(r.err.find("did you mean 'rail_cooldown_secs'?") != std::string::npos, "stderr: %s", r.err.c_str());
}

Test(tent_run, library_not_named_libtent_is_refused) {
    // A copy of libtent under another name would not wrap a verb: the
    // command would run without tent and nothing would say so.
    test::TempDir dir;
    test::FakeEnv env{"TENT_LIBRARY=" + libm_path(), "HOME=" + dir.path(), "PATH=/usr/bin:/bin"};
    RunResult r = run_tent_run({"sh", "-c", "exit 7"}, env, dir);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err.c_str());
    cr_expect(r.err.find("the library's file name must start with libtent.so") != std::string::npos, "stderr: %s",
              r.err.c_str());
}

Test(tent_run, missing_command_exits_127) {
    test::TempDir dir;
    // A library that is there (the build tree's need not be: the
    // sanitizer tree builds only what its unit suites run).
    std::string lib = dir.path() + "/libtent.so.0";
    cr_assert_eq(symlink(libm_path().c_str(), lib.c_str()), 0);
    test::FakeEnv env{"TENT_LIBRARY=" + lib, "HOME=" + dir.path(), "PATH=" + dir.path()};
    RunResult r = run_tent_run({"no-such-command-here"}, env, dir);
    cr_expect_eq(r.status, 127);
    cr_expect(r.err.find("cannot run no-such-command-here") != std::string::npos, "stderr: %s", r.err.c_str());
}
