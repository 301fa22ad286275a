#include "metrics/stats_codec.h"

#include "metrics/byte_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tent {
namespace {

constexpr std::size_t kMaxLabels = 0xff;

std::string encode_sample(const Sample& s, std::size_t label_count) {
    std::string out;
    for (std::size_t i = 0; i < label_count; ++i)
        put_string(out, i < s.label_values.size() ? s.label_values[i] : std::string());
    put_bytes<double>(out, s.value);
    return out;
}

Status corrupt(const char* what) {
    return Status(Code::InvalidArgument, std::string("corrupt stats data: ") + what);
}

} // namespace

EncodedStats encode_stats(const MetricsSnapshot& snapshot, std::size_t max_bytes) {
    EncodedStats out;
    if (max_bytes < sizeof(std::uint32_t)) {
        out.truncated = true;
        return out;
    }
    std::string& b = out.bytes;
    put_bytes<std::uint32_t>(b, 0);  // family count, patched below
    std::uint32_t families = 0;
    for (const auto& f : snapshot.families) {
        const std::size_t labels = std::min(f.label_names.size(), kMaxLabels);
        std::string head;
        put_bytes<std::uint8_t>(head, static_cast<std::uint8_t>(f.type));
        put_string(head, f.name);
        put_string(head, f.help);
        put_bytes<std::uint8_t>(head, static_cast<std::uint8_t>(labels));
        for (std::size_t i = 0; i < labels; ++i) put_string(head, f.label_names[i]);
        const std::size_t count_at = head.size();
        put_bytes<std::uint32_t>(head, 0);  // sample count, patched below
        if (b.size() + head.size() > max_bytes) {
            out.truncated = true;
            break;
        }
        const std::size_t head_at = b.size();
        b += head;
        std::uint32_t samples = 0;
        for (const auto& s : f.samples) {
            std::string enc = encode_sample(s, labels);
            if (b.size() + enc.size() > max_bytes) {
                out.truncated = true;
                break;
            }
            b += enc;
            ++samples;
        }
        std::memcpy(&b[head_at + count_at], &samples, sizeof samples);
        ++families;
        if (out.truncated) break;
    }
    std::memcpy(&b[0], &families, sizeof families);
    return out;
}

Result<MetricsSnapshot> decode_stats(const void* data, std::size_t size) {
    ByteReader r(data, size);
    MetricsSnapshot snap;
    std::uint32_t families;
    if (!r.get(&families)) return corrupt("no family count");
    for (std::uint32_t fi = 0; fi < families; ++fi) {
        FamilySnapshot f;
        std::uint8_t type, labels;
        if (!r.get(&type) || type > static_cast<std::uint8_t>(MetricType::Gauge))
            return corrupt("bad metric type");
        f.type = static_cast<MetricType>(type);
        if (!r.get_str(&f.name) || !r.get_str(&f.help) || !r.get(&labels))
            return corrupt("truncated family header");
        f.label_names.resize(labels);
        for (auto& l : f.label_names)
            if (!r.get_str(&l)) return corrupt("truncated label name");
        std::uint32_t samples;
        if (!r.get(&samples)) return corrupt("no sample count");
        // Each sample needs at least its value and label lengths: refuse
        // counts the remaining bytes cannot hold before allocating for them.
        const std::size_t min_sample = sizeof(double) + 2u * labels;
        if (samples > r.left() / min_sample) return corrupt("sample count exceeds data");
        f.samples.resize(samples);
        for (auto& s : f.samples) {
            s.label_values.resize(labels);
            for (auto& v : s.label_values)
                if (!r.get_str(&v)) return corrupt("truncated label value");
            if (!r.get(&s.value)) return corrupt("truncated value");
        }
        snap.families.push_back(std::move(f));
    }
    return snap;
}

} // namespace tent
