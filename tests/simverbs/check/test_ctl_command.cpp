// simverbs-ctl's command line maps onto exactly the control-protocol line
// the library parses, and bad arguments are refused before any process is
// contacted.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "ctl/command.h"

using simverbs::ctl::Command;
using simverbs::ctl::parse_command;

namespace {

std::string line_of(const std::vector<std::string>& args) {
    auto c = parse_command(args);
    cr_assert(c.is_ok(), "refused: %s", c.status().message().c_str());
    return c->line;
}

void expect_refused(const std::vector<std::string>& args, const char* fragment) {
    auto c = parse_command(args);
    cr_assert(!c.is_ok(), "accepted: %s", c.is_ok() ? c->line.c_str() : "");
    const std::string msg = c.status().message();
    cr_expect(msg.find(fragment) != std::string::npos, "message '%s' lacks '%s'", msg.c_str(),
              fragment);
}

} // namespace

Test(ctl_command, list_all_and_one) {
    auto all = parse_command({"list"});
    cr_assert(all.is_ok());
    cr_expect(all->kind == Command::Kind::List);
    cr_expect_eq(all->pid, 0);
    const std::string line = all->line;
    cr_expect_str_eq(line.c_str(), "list");

    auto one = parse_command({"list", "4242"});
    cr_assert(one.is_ok());
    cr_expect_eq(one->pid, 4242);
    expect_refused({"list", "abc"}, "not a process id");
    expect_refused({"list", "1", "2"}, "at most one PID");
}

Test(ctl_command, port_commands_map_to_protocol) {
    struct Case {
        std::vector<std::string> args;
        const char* line;
    } cases[] = {
        {{"port-down", "4242", "mlx5_1"}, "port-down mlx5_1"},
        {{"port-up", "4242", "mlx5_1"}, "port-up mlx5_1"},
        {{"drop", "7", "mlx5_0", "0.25"}, "drop mlx5_0 0.25"},
        {{"drop", "7", "mlx5_0", "0"}, "drop mlx5_0 0"},
        {{"drop", "7", "mlx5_0", "1"}, "drop mlx5_0 1"},
        {{"fail", "7", "mlx5_0", "IBV_WC_RETRY_EXC_ERR", "--after", "10"},
         "fail mlx5_0 IBV_WC_RETRY_EXC_ERR after 10"},
        {{"fail", "7", "mlx5_0", "IBV_WC_REM_ACCESS_ERR", "--prob", "0.5"},
         "fail mlx5_0 IBV_WC_REM_ACCESS_ERR prob 0.5"},
        // The ibv_wc_status_str text may span several words.
        {{"fail", "7", "mlx5_0", "transport", "retry", "counter", "exceeded", "--after", "1"},
         "fail mlx5_0 transport retry counter exceeded after 1"},
        {{"fail", "7", "mlx5_0", "off"}, "fail mlx5_0 off"},
        {{"ack-loss", "7", "mlx5_1", "--every", "3"}, "ack-loss mlx5_1 every 3"},
        {{"ack-loss", "7", "mlx5_1", "off"}, "ack-loss mlx5_1 off"},
        {{"fatal", "7", "mlx5_1"}, "fatal mlx5_1"},
        {{"clear", "7", "mlx5_1"}, "clear mlx5_1"},
    };
    for (const auto& c : cases) {
        const std::string got = line_of(c.args);
        cr_expect_str_eq(got.c_str(), c.line);
    }
}

Test(ctl_command, port_command_names_process_and_device) {
    auto c = parse_command({"port-down", "4242", "mlx5_1"});
    cr_assert(c.is_ok());
    cr_expect(c->kind == Command::Kind::Port);
    cr_expect_eq(c->pid, 4242);
    const std::string dev = c->device, done = c->done;
    cr_expect_str_eq(dev.c_str(), "mlx5_1");
    cr_expect_str_eq(done.c_str(), "port down");
}

Test(ctl_command, bad_arguments_are_refused) {
    expect_refused({}, "missing command");
    expect_refused({"unplug", "1", "mlx5_0"}, "unknown command");
    expect_refused({"port-down", "1"}, "expected PID DEV");
    expect_refused({"port-down", "0", "mlx5_0"}, "not a process id");
    expect_refused({"port-down", "-5", "mlx5_0"}, "not a process id");
    expect_refused({"port-down", "12x", "mlx5_0"}, "not a process id");
    expect_refused({"port-down", "1", "mlx5_0", "extra"}, "nothing more");
    expect_refused({"drop", "1", "mlx5_0"}, "expected PID DEV RATE");
    expect_refused({"drop", "1", "mlx5_0", "1.5"}, "from 0 to 1");
    expect_refused({"drop", "1", "mlx5_0", "-0.1"}, "from 0 to 1");
    expect_refused({"drop", "1", "mlx5_0", "lots"}, "from 0 to 1");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_NO_SUCH_ERR", "--after", "1"},
                   "unknown completion status");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_SUCCESS", "--after", "1"}, "not a failure");
    expect_refused({"fail", "1", "mlx5_0", "--after", "1"}, "missing STATUS");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_FATAL_ERR"}, "--after N");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_FATAL_ERR", "--after", "0"}, "positive integer");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_FATAL_ERR", "--after", "-3"}, "positive integer");
    expect_refused({"fail", "1", "mlx5_0", "IBV_WC_FATAL_ERR", "--prob", "2"}, "from 0 to 1");
    expect_refused({"ack-loss", "1", "mlx5_0", "--every"}, "--every N");
    expect_refused({"ack-loss", "1", "mlx5_0", "--every", "x"}, "positive integer");
}

Test(ctl_command, status_names_follow_verbs_h) {
    cr_expect(simverbs::ctl::is_wc_status_name("IBV_WC_RETRY_EXC_ERR"));
    cr_expect(simverbs::ctl::is_wc_status_name("IBV_WC_WR_FLUSH_ERR"));
    cr_expect(!simverbs::ctl::is_wc_status_name("IBV_WC_RETRY"));
    cr_expect_eq(simverbs::ctl::wc_status_names().size(), 24u);
}
