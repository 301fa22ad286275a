// The stats byte format: exact round trip, truncation that keeps whole
// samples, and decoding that rejects every damaged buffer without reading
// out of bounds.
#include <criterion/criterion.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "metrics/prometheus_text.h"
#include "metrics/stats_codec.h"

using namespace tent;

namespace {

MetricsSnapshot sample_snapshot() {
    MetricsSnapshot s;
    FamilySnapshot a{"tent_a_total", "A counter", MetricType::Counter, {"rail", "reason"}, {}};
    for (int i = 0; i < 20; ++i)
        a.samples.push_back({{"mlx5_" + std::to_string(i) + ":1", i % 2 ? "probe" : "we\"ird\n"}, double(i * 7)});
    FamilySnapshot b{"tent_b", "", MetricType::Gauge, {}, {{{}, 2.75}}};
    FamilySnapshot c{"tent_c", "no samples", MetricType::Gauge, {"x"}, {}};
    s.families = {a, b, c};
    return s;
}

bool same(const MetricsSnapshot& x, const MetricsSnapshot& y) {
    if (x.families.size() != y.families.size()) return false;
    for (std::size_t i = 0; i < x.families.size(); ++i) {
        const auto &f = x.families[i], &g = y.families[i];
        if (f.name != g.name || f.help != g.help || f.type != g.type || f.label_names != g.label_names ||
            f.samples.size() != g.samples.size())
            return false;
        for (std::size_t j = 0; j < f.samples.size(); ++j)
            if (f.samples[j].label_values != g.samples[j].label_values ||
                f.samples[j].value != g.samples[j].value)
                return false;
    }
    return true;
}

} // namespace

Test(stats_codec, round_trip_is_exact) {
    MetricsSnapshot s = sample_snapshot();
    EncodedStats enc = encode_stats(s, 1 << 20);
    cr_expect_not(enc.truncated);
    auto back = decode_stats(enc.bytes.data(), enc.bytes.size());
    cr_assert(back.is_ok(), "%s", back.status().to_string().c_str());
    cr_expect(same(s, *back));
    std::string a = render_prometheus(s), b = render_prometheus(*back);
    cr_expect_str_eq(a.c_str(), b.c_str());
}

Test(stats_codec, truncation_keeps_a_decodable_prefix_of_whole_samples) {
    MetricsSnapshot s = sample_snapshot();
    const std::size_t full = encode_stats(s, 1 << 20).bytes.size();
    std::size_t previous_samples = 0;
    for (std::size_t limit = 4; limit <= full; ++limit) {
        EncodedStats enc = encode_stats(s, limit);
        cr_assert_leq(enc.bytes.size(), limit);
        cr_expect_eq(enc.truncated, limit < full, "limit %zu", limit);
        auto back = decode_stats(enc.bytes.data(), enc.bytes.size());
        cr_assert(back.is_ok(), "limit %zu: %s", limit, back.status().to_string().c_str());
        // What survives is exactly the leading samples, in order.
        std::size_t n = 0;
        for (std::size_t f = 0; f < back->families.size(); ++f) {
            const auto& got = back->families[f];
            const auto& want = s.families[f];
            cr_assert_leq(got.samples.size(), want.samples.size());
            for (std::size_t j = 0; j < got.samples.size(); ++j) {
                cr_expect(got.samples[j].label_values == want.samples[j].label_values);
                cr_expect_eq(got.samples[j].value, want.samples[j].value);
            }
            n += got.samples.size();
        }
        cr_expect_geq(n, previous_samples, "a bigger budget never keeps fewer samples");
        previous_samples = n;
    }
    cr_expect_eq(previous_samples, 21u);
}

Test(stats_codec, every_strict_prefix_is_rejected) {
    EncodedStats enc = encode_stats(sample_snapshot(), 1 << 20);
    for (std::size_t len = 0; len < enc.bytes.size(); ++len) {
        auto r = decode_stats(enc.bytes.data(), len);
        cr_expect_not(r.is_ok(), "prefix of %zu bytes decoded", len);
    }
}

Test(stats_codec, garbage_never_reads_out_of_bounds) {
    // Each buffer sits in an exact-size heap block, so an overrun would be
    // caught by the allocator or a sanitizer build.
    std::mt19937 rng(12345);
    int accepted = 0;
    for (int round = 0; round < 3000; ++round) {
        const std::size_t len = rng() % 300;
        auto buf = std::make_unique<unsigned char[]>(len + 1);
        for (std::size_t i = 0; i < len; ++i) buf[i] = static_cast<unsigned char>(rng());
        if (len >= 4 && round % 2) buf[0] = 1, buf[1] = buf[2] = buf[3] = 0;  // plausible count
        auto r = decode_stats(buf.get(), len);
        accepted += r.is_ok();
    }
    cr_expect_lt(accepted, 3000);
}

Test(stats_codec, absurd_sample_count_is_refused_before_allocating) {
    std::string b;
    auto put32 = [&](std::uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
    put32(1);
    b += char(0);                    // counter
    b += std::string("\x01\x00x", 3);  // name "x"
    b += std::string("\x00\x00", 2);   // empty help
    b += char(0);                    // no labels
    put32(0xffffffffu);              // 4 billion samples, 0 bytes of them
    auto r = decode_stats(b.data(), b.size());
    cr_assert_not(r.is_ok());
    std::string msg = r.status().message();
    cr_expect(msg.find("sample count") != std::string::npos, "%s", msg.c_str());
}
