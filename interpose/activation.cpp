#include "activation.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace tent::interpose {

namespace {

// An entry of LD_PRELOAD (separated by ':' or blanks) whose file name
// starts with "libtent.so".
bool names_libtent(const char* list) {
    if (!list) return false;
    std::string_view all(list);
    std::size_t pos = 0;
    while (pos < all.size()) {
        std::size_t end = all.find_first_of(": \t", pos);
        if (end == std::string_view::npos) end = all.size();
        std::string_view entry = all.substr(pos, end - pos);
        std::size_t slash = entry.rfind('/');
        std::string_view file = slash == std::string_view::npos ? entry : entry.substr(slash + 1);
        if (file.substr(0, 10) == "libtent.so") return true;
        pos = end + 1;
    }
    return false;
}

// Decided before main(), while the environment is still the one the
// program was started with.
const bool g_preloaded = names_libtent(std::getenv("LD_PRELOAD"));

thread_local int t_depth = 0;

} // namespace

bool preloaded() { return g_preloaded; }
bool inside_tent() { return t_depth > 0; }
TentScope::TentScope() { ++t_depth; }
TentScope::~TentScope() { --t_depth; }

} // namespace tent::interpose
