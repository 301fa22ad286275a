// Two tents of one job with authentication set differently (auth = true on
// one, false on the other): the connecting side's connect() fails at once,
// either way round, with an error that says so and names the knob (not a
// bare close, a timeout or "is the peer a tent?"), and the accepting side
// stays open to a peer set like itself.
#include <criterion/criterion.h>

#include <chrono>
#include <string>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

Config config_with_auth(bool on) {
    Config c = tcp_pair_config();
    (void)c.set(Knob::Auth, on ? "true" : "false", api_source());
    (void)c.set(Knob::JobKey, "test_auth_mismatch: the job's key", api_source());
    (void)c.set(Knob::ConnectTimeoutMs, "5000", api_source());
    (void)c.set(Knob::LogLevel, "error", api_source());  // the refusal is a warning by design
    return c;
}

// Connects from an engine with auth = from_auth to one with auth = !from_auth.
void expect_mismatch_reported(bool from_auth) {
    auto initiator = make_tcp_engine(config_with_auth(from_auth));
    auto responder = make_tcp_engine(config_with_auth(!from_auth));
    const auto t0 = std::chrono::steady_clock::now();
    auto r = initiator->connect(responder->address());
    const auto took = std::chrono::steady_clock::now() - t0;
    cr_assert(!r.is_ok(), "a connection between auth = %s and auth = %s was set up", from_auth ? "true" : "false",
              from_auth ? "false" : "true");
    const std::string why = r.status().to_string();
    cr_expect(why.find("authentication is on at one end and off at the other") != std::string::npos, "%s",
              why.c_str());
    cr_expect(why.find("auth") != std::string::npos, "%s", why.c_str());
    // Told at once: well within connect_timeout_ms (5 s).
    cr_expect(took < std::chrono::seconds(3), "took %lld ms",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
    // The responder is unharmed: a peer set like it connects and is served.
    auto alike = make_tcp_engine(config_with_auth(!from_auth));
    auto ok = alike->connect(responder->address());
    cr_expect(ok.is_ok(), "%s", ok.status().to_string().c_str());
}

} // namespace

Test(auth_mismatch, auth_on_connecting_to_auth_off_is_told_why, .timeout = 60) { expect_mismatch_reported(true); }

Test(auth_mismatch, auth_off_connecting_to_auth_on_is_told_why, .timeout = 60) { expect_mismatch_reported(false); }
