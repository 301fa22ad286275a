// Prometheus text exposition: exact output, escaping per the format, value
// spelling, and families without samples left out.
#include <criterion/criterion.h>

#include <cmath>
#include <limits>
#include <string>

#include "metrics/prometheus_text.h"
#include "metrics/registry.h"

using namespace tent;

Test(prometheus_text, renders_help_type_and_samples_exactly) {
    Registry r;
    auto pauses = r.counter<1>("tent_rail_pauses_total", "Times a rail was paused", {"rail"});
    auto bw = r.gauge<2>("tent_bw", "Bandwidth", {"rail", "dir"});
    auto empty = r.counter<1>("tent_unused_total", "Never used", {"rail"});
    cr_assert(pauses.is_ok() && bw.is_ok() && empty.is_ok());
    (*pauses)->with({"mlx5_1:1"}).inc(2);
    (*pauses)->with({"mlx5_0:1"}).inc(3);
    (*bw)->with({"mlx5_0:1", "tx"}).set(1.5);
    std::string text = render_prometheus(r.snapshot());
    const char* expected =
        "# HELP tent_rail_pauses_total Times a rail was paused\n"
        "# TYPE tent_rail_pauses_total counter\n"
        "tent_rail_pauses_total{rail=\"mlx5_0:1\"} 3\n"
        "tent_rail_pauses_total{rail=\"mlx5_1:1\"} 2\n"
        "# HELP tent_bw Bandwidth\n"
        "# TYPE tent_bw gauge\n"
        "tent_bw{rail=\"mlx5_0:1\",dir=\"tx\"} 1.5\n";
    cr_expect_str_eq(text.c_str(), expected);
}

Test(prometheus_text, label_less_metric_has_no_braces) {
    Registry r;
    auto c = r.counter<0>("tent_up_total", "Up", {});
    cr_assert(c.is_ok());
    std::string text = render_prometheus(r.snapshot());
    cr_expect_str_eq(text.c_str(), "# HELP tent_up_total Up\n# TYPE tent_up_total counter\ntent_up_total 0\n");
}

Test(prometheus_text, label_values_and_help_are_escaped) {
    std::string v = escape_label_value("a\\b\"c\nd");
    cr_expect_str_eq(v.c_str(), "a\\\\b\\\"c\\nd");
    // HELP keeps double quotes as they are.
    std::string h = escape_help("line \"one\"\nback\\slash");
    cr_expect_str_eq(h.c_str(), "line \"one\"\\nback\\\\slash");

    Registry r;
    auto c = r.counter<1>("tent_e_total", "Help with\nnewline", {"rail"});
    cr_assert(c.is_ok());
    (*c)->with({"we\"ird\\rail\n"}).inc();
    std::string text = render_prometheus(r.snapshot());
    const char* expected =
        "# HELP tent_e_total Help with\\nnewline\n"
        "# TYPE tent_e_total counter\n"
        "tent_e_total{rail=\"we\\\"ird\\\\rail\\n\"} 1\n";
    cr_expect_str_eq(text.c_str(), expected);
}

Test(prometheus_text, values_are_spelled_as_prometheus_reads_them) {
    struct {
        double v;
        const char* text;
    } cases[] = {
        {0, "0"},
        {42, "42"},
        {-3, "-3"},
        {1e6, "1000000"},
        {9007199254740992.0, "9007199254740992"},
        {0.1, "0.1"},
        {2.5e-7, "2.5e-07"},
        {1e300, "1e+300"},
        {std::numeric_limits<double>::infinity(), "+Inf"},
        {-std::numeric_limits<double>::infinity(), "-Inf"},
        {std::nan(""), "NaN"},
    };
    for (const auto& c : cases) {
        std::string got = format_sample_value(c.v);
        cr_expect_str_eq(got.c_str(), c.text);
    }
    // Non-integral values read back exactly.
    for (double v : {0.1, 1.0 / 3, 123456.789, 6.02214076e23}) {
        std::string s = format_sample_value(v);
        cr_expect_eq(std::stod(s), v, "%s", s.c_str());
    }
}
