// The list helpers the configuration's values share: blanks trimmed, items
// split on commas with empty items kept for callers that reject them.
#include <criterion/criterion.h>

#include "common/text.h"

using namespace tent;

Test(text, trim_blanks_removes_spaces_and_tabs_at_both_ends_only) {
    cr_expect(trim_blanks(" \tmlx5_0 \t") == "mlx5_0");
    cr_expect(trim_blanks("a b") == "a b");
    cr_expect(trim_blanks(" \t ").empty());
    cr_expect(trim_blanks("").empty());
}

Test(text, split_commas_trims_items_and_keeps_empty_ones) {
    cr_expect(split_commas(" mlx5_0, mlx5_1 ") == (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
    cr_expect(split_commas("a,,b") == (std::vector<std::string>{"a", "", "b"}));
    cr_expect(split_commas("a,") == (std::vector<std::string>{"a", ""}));
    cr_expect(split_commas("") == (std::vector<std::string>{""}));
}
