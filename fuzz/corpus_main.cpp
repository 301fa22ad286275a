// The make check side of a fuzz target: feeds every file of its corpus
// (fuzz/corpus/TARGET, or the files and directories given) to
// LLVMFuzzerTestOneInput once, so that a seed or a past finding that breaks
// again fails the suite without clang or libFuzzer. A broken promise aborts
// after this program has named the file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_check.h"

#ifndef TENT_FUZZ_TARGET
#error "TENT_FUZZ_TARGET names the target (its corpus directory)"
#endif

namespace fs = std::filesystem;

namespace {

bool run_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read %s\n", TENT_FUZZ_TARGET, path.c_str());
        return false;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s: %s (%zu bytes)\n", TENT_FUZZ_TARGET, path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return true;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<fs::path> roots;
    for (int i = 1; i < argc; ++i) roots.emplace_back(argv[i]);
    if (roots.empty()) {
        const char* srcdir = std::getenv("TEST_SRCDIR");
        roots.emplace_back(fs::path(srcdir && *srcdir ? srcdir : ".") / "fuzz" / "corpus" / TENT_FUZZ_TARGET);
    }
    std::vector<fs::path> files;
    for (const auto& root : roots) {
        std::error_code ec;
        if (fs::is_directory(root, ec)) {
            for (const auto& entry : fs::directory_iterator(root, ec))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else if (fs::exists(root, ec)) {
            files.push_back(root);
        } else {
            std::fprintf(stderr, "%s: no such file or directory: %s\n", TENT_FUZZ_TARGET, root.c_str());
            return 1;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "%s: empty corpus\n", TENT_FUZZ_TARGET);
        return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        if (!run_file(f)) return 1;
    std::printf("%s: %zu inputs, no crash\n", TENT_FUZZ_TARGET, files.size());
    return 0;
}
