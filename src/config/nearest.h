// "Did you mean ...?": the closest name by edit distance, for warnings about
// misspelled keys, sections and TENT_* variables.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tent {

// Levenshtein distance (insertions, deletions, substitutions), case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to word, or "" when none is close enough to be a
// plausible misspelling (distance at most max(2, |word| / 5)). Ties go to
// the earlier candidate.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& suggestion);

} // namespace tent
