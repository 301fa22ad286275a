// Which libtent tent-run preloads: the library it was built or installed
// with, found from tent-run's own location, so that the build tree's
// tent-run preloads the build tree's library and an installed (or staged,
// DESTDIR) tent-run preloads the library installed beside it.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "tent-run/commands.h"

namespace tent::tools {

namespace {

constexpr const char* kLibraryName = "libtent.so.0";

bool is_file(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string own_directory() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    std::string exe(buf, static_cast<std::size_t>(n));
    auto slash = exe.rfind('/');
    return slash == std::string::npos ? std::string() : exe.substr(0, slash);
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

} // namespace

std::string library_to_preload() {
    if (const char* forced = std::getenv("TENT_LIBRARY"); forced && *forced) return forced;
    std::string here = own_directory();
    // In the build tree, tent-run sits at the top of the build directory,
    // where libtool leaves libtent under .libs.
    if (!here.empty() && is_file(here + "/.libs/" + kLibraryName)) return here + "/.libs/" + kLibraryName;
    // Installed: bindir and libdir share their prefix; a staged install
    // (DESTDIR) or a moved prefix keeps that relation.
    std::string bindir = TENT_BINDIR;
    if (!here.empty() && ends_with(here, bindir)) {
        std::string root = here.substr(0, here.size() - bindir.size());
        std::string candidate = root + TENT_LIBDIR + "/" + kLibraryName;
        if (is_file(candidate)) return candidate;
    }
    return std::string(TENT_LIBDIR) + "/" + kLibraryName;
}

} // namespace tent::tools
