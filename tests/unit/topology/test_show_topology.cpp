// tent-run --show-topology over synthetic machines: the exact report, and
// nothing on stderr.
#include <criterion/criterion.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace {

std::string env_path(const char* var, const char* rest) {
    const char* dir = std::getenv(var);
    cr_assert(dir != nullptr, "%s is not set (run through make check)", var);
    return std::string(dir) + rest;
}

struct Run {
    int status = -1;
    std::string out, err;
};

// Runs tent-run --show-topology pinned to one CPU with HWLOC_XMLFILE set;
// bounded to 10 seconds.
Run show_topology(const std::string& xml, int cpu) {
    std::string tool = env_path("TEST_BUILDDIR", "/tent-run");
    int out[2], err[2];
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(91);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]);
        close(err[0]);
        close(out[1]);
        close(err[1]);
        setenv("HWLOC_XMLFILE", xml.c_str(), 1);
        execl(tool.c_str(), tool.c_str(), "--show-topology", static_cast<char*>(nullptr));
        _exit(92);
    }
    close(out[1]);
    close(err[1]);
    Run run;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&run.out, &run.err};
    int open_fds = 2;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (open_fds > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) close(f.fd);
    cr_assert_eq(waitpid(pid, &run.status, 0), pid);
    return run;
}

bool have_cpu(int cpu) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(cpu, &set);
}

} // namespace

Test(show_topology, lists_devices_numa_nodes_and_the_calling_thread) {
    int cpu = have_cpu(1) ? 1 : 0;
    Run run = show_topology(env_path("TEST_SRCDIR", "/tests/data/topology/2numa-4hca.xml"), cpu);
    cr_expect(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0, "status %d", run.status);
    std::string want =
        "device mlx5_0 numa 0\n"
        "device mlx5_1 numa 0\n"
        "device mlx5_2 numa 1\n"
        "device mlx5_3 numa 1\n"
        "numa nodes: 2\n"
        "calling thread: cpu " + std::to_string(cpu) + ", numa " + std::to_string(cpu) + "\n";
    cr_expect_str_eq(run.out.c_str(), want.c_str());
    cr_expect_str_eq(run.err.c_str(), "");
}

Test(show_topology, says_when_there_are_no_rdma_devices) {
    Run run = show_topology(env_path("TEST_SRCDIR", "/tests/data/topology/1numa-nohca.xml"), 0);
    cr_expect(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0, "status %d", run.status);
    std::string want =
        "no RDMA devices found\n"
        "numa nodes: 1\n"
        "calling thread: cpu 0, numa 0\n";
    cr_expect_str_eq(run.out.c_str(), want.c_str());
    cr_expect_str_eq(run.err.c_str(), "");
}
