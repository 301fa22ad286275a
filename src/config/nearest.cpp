#include "config/nearest.h"

#include <algorithm>

#include "config/config.h"

namespace tent {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
    std::size_t limit = std::max<std::size_t>(2, word.size() / 5);
    std::size_t best = limit + 1;
    std::string found;
    for (const auto& c : candidates) {
        // The distance is at least the difference in length: skipping those
        // keeps a long unknown name (a TENT_* variable has no length limit)
        // from costing |word| x |candidate| steps per candidate.
        const std::size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
        if (gap >= best) continue;
        std::size_t d = edit_distance(word, c);
        if (d < best) {
            best = d;
            found = c;
        }
    }
    return found;
}

std::string did_you_mean(const std::string& suggestion) {
    return suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)";
}

std::string nearest_knob_key(const std::string& key) {
    std::vector<std::string> keys;
    for (const auto& spec : knob_table()) keys.emplace_back(spec.key);
    return nearest_name(key, keys);
}

} // namespace tent
