// Value parsing for every knob type (including types no knob uses yet) and
// the nearest-name suggestions.
#include <criterion/criterion.h>

#include "config/config.h"
#include "config/nearest.h"
#include "config/policy_rules.h"
#include "config/value_parser.h"

using namespace tent;

namespace {

KnobSpec spec_of(KnobType type, double min, double max, std::string_view choices = "") {
    return KnobSpec{Knob::LogLevel, "test_knob", "test", type, "0", min, max, choices, false, "test"};
}

std::string error_of(const KnobSpec& spec, const std::string& text) {
    auto v = parse_knob_value(spec, text);
    return v.is_ok() ? "(accepted)" : v.status().message();
}

} // namespace

Test(values, sizes_accept_suffixes_and_reject_the_rest) {
    auto s = spec_of(KnobType::Size, 0, 1e13);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(s, "4096")), 4096);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(s, "64K")), 65536);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(s, "2m")), 2 << 20);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(s, "1GB")), 1LL << 30);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(s, "3T")), 3LL << 40);
    std::string e1 = error_of(s, "1.5M");
    cr_expect_str_eq(e1.c_str(), "value '1.5M' is not a size (accepted: 0..10000000000000 bytes, or with a K, M, G or T suffix)");
    std::string e2 = error_of(s, "99999999T");
    cr_expect_str_eq(e2.c_str(), "value '99999999T' is out of range (accepted: 0..10000000000000)");
    std::string e3 = error_of(s, "10T");
    cr_expect_str_eq(e3.c_str(), "value '10T' is out of range (accepted: 0..10000000000000)");
    std::string e4 = error_of(s, "K");
    cr_expect(e4.find("is not a size") != std::string::npos, "%s", e4.c_str());
}

Test(values, doubles_are_finite_and_bounded) {
    auto d = spec_of(KnobType::Double, 0, 1);
    cr_expect_float_eq(std::get<double>(*parse_knob_value(d, "0.25")), 0.25, 1e-12);
    std::string e1 = error_of(d, "1.5");
    cr_expect_str_eq(e1.c_str(), "value '1.5' is out of range (accepted: 0..1)");
    std::string e2 = error_of(d, "nan");
    cr_expect_str_eq(e2.c_str(), "value 'nan' is not a number (accepted: 0..1)");
    std::string e3 = error_of(d, "0.5x");
    cr_expect_str_eq(e3.c_str(), "value '0.5x' is not a number (accepted: 0..1)");
}

Test(values, integers_reject_trailing_text_and_overflow) {
    auto i = spec_of(KnobType::Int, -5, 5);
    cr_expect_eq(std::get<std::int64_t>(*parse_knob_value(i, "-5")), -5);
    std::string e1 = error_of(i, "5 apples");
    cr_expect_str_eq(e1.c_str(), "value '5 apples' is not an integer (accepted: -5..5)");
    std::string e2 = error_of(i, "-99999999999999999999");
    cr_expect_str_eq(e2.c_str(), "value '-99999999999999999999' is out of range (accepted: -5..5)");
}

Test(values, config_set_keeps_old_value_on_error) {
    Config c;
    Status bad = c.set(Knob::RailCooldownSecs, "nope", Source{Source::Kind::Api, "", 0, ""});
    cr_expect_not(bad.is_ok());
    cr_expect_eq(c.get_int(Knob::RailCooldownSecs), 30);
    Status good = c.set(Knob::RailCooldownSecs, "31", Source{Source::Kind::Mca, "", 0, "btl_tent_rail_cooldown_secs"});
    cr_expect(good.is_ok());
    cr_expect_eq(c.get_int(Knob::RailCooldownSecs), 31);
    std::string s = c.source(Knob::RailCooldownSecs).to_string();
    cr_expect_str_eq(s.c_str(), "mca btl_tent_rail_cooldown_secs");
}

Test(nearest, edit_distance_counts_single_edits) {
    cr_expect_eq(edit_distance("", ""), 0u);
    cr_expect_eq(edit_distance("abc", ""), 3u);
    cr_expect_eq(edit_distance("kitten", "sitting"), 3u);
    cr_expect_eq(edit_distance("treshold", "threshold"), 1u);
}

Test(nearest, suggests_close_knob_keys_only) {
    std::string a = nearest_knob_key("rail_error_treshold");
    cr_expect_str_eq(a.c_str(), "rail_error_threshold");
    std::string b = nearest_knob_key("log_levle");
    cr_expect_str_eq(b.c_str(), "log_level");
    std::string c = nearest_knob_key("rail_cooldown_sec");
    cr_expect_str_eq(c.c_str(), "rail_cooldown_secs");
    std::string d = nearest_knob_key("frobnicate");
    cr_expect_str_eq(d.c_str(), "");
    std::string e = nearest_knob_key("rail_cooldown_secs");
    cr_expect_str_eq(e.c_str(), "rail_cooldown_secs");
}

// Names that differ in length by up to the limit are still suggested; a name
// far longer than any knob (a TENT_* variable can be any length) gets no
// suggestion, and costs one length comparison per candidate, not
// |name| x |candidate| steps (a 1 MiB TENT_* name cost about 10^9 steps
// against the ~60 knob names before).
Test(nearest, length_gap_bounds_the_work) {
    std::string a = nearest_knob_key("log_lev");
    cr_expect_str_eq(a.c_str(), "log_level");
    std::string b = nearest_knob_key("log_levelxx");
    cr_expect_str_eq(b.c_str(), "log_level");
    std::string c = nearest_knob_key("log_levelxxx");
    cr_expect_str_eq(c.c_str(), "");
    std::string d = nearest_name(std::string(std::size_t{1} << 20, 'r'), {"rail_cooldown_secs", "r"});
    cr_expect_str_eq(d.c_str(), "");
    std::string e = nearest_name("TENT_LOG_LEVE", {std::string(4096, 'T'), "TENT_LOG_LEVEL"});
    cr_expect_str_eq(e.c_str(), "TENT_LOG_LEVEL");
}

Test(policy_syntax, values_are_normalised) {
    auto t = check_policy_value("transports", " RDMA , tcp ");
    cr_assert(t.is_ok());
    cr_expect(*t == "rdma,tcp");
    auto p = check_policy_value("priority", "HIGH");
    cr_expect(p.is_ok() && *p == "high");
    auto s = check_policy_value("same_machine", "any");
    cr_expect(s.is_ok() && *s == "any");
    auto d = check_policy_value("devices", "mlx5_0, mlx5_1");
    cr_expect(d.is_ok() && *d == "mlx5_0,mlx5_1");
    // Masks select whole devices: a port suffix is refused, not silently unmatched.
    cr_expect_not(check_policy_value("devices", "mlx5_1:1").is_ok());
    cr_expect_not(check_policy_value("transports", "any").is_ok());
    cr_expect_not(check_policy_value("nope", "x").is_ok());
    cr_expect_eq(policy_rule_keys().size(), 9u);
    cr_expect(is_valid_policy_name("large-rdma.v2"));
    cr_expect_not(is_valid_policy_name("a b"));
    cr_expect_not(is_valid_policy_name(""));
}
