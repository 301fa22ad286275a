// Shared by the config tests: a private temporary directory with files in
// it, a fake environment, and where the test data lives.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tent::test {

// Removed with everything in it when it goes out of scope.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "tent-config-test-XXXXXX").string();
        if (mkdtemp(tmpl.data())) path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    // Writes text to path()/name (creating folders) and returns the full path.
    std::string write(const std::string& name, const std::string& text) const {
        std::filesystem::path p = std::filesystem::path(path_) / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }

private:
    std::string path_;
};

// A NULL-terminated environment built from "NAME=value" strings.
class FakeEnv {
public:
    FakeEnv(std::initializer_list<std::string> vars) : vars_(vars) { rebuild(); }
    void add(const std::string& var) {
        vars_.push_back(var);
        rebuild();
    }
    char** get() { return ptrs_.data(); }

private:
    void rebuild() {
        ptrs_.clear();
        for (auto& v : vars_) ptrs_.push_back(v.data());
        ptrs_.push_back(nullptr);
    }
    std::vector<std::string> vars_;
    std::vector<char*> ptrs_;
};

// $TEST_SRCDIR (set by make check), else the current directory.
inline std::string srcdir() {
    const char* s = std::getenv("TEST_SRCDIR");
    return s ? s : ".";
}

inline std::string builddir() {
    const char* s = std::getenv("TEST_BUILDDIR");
    return s ? s : ".";
}

// Sorted names of the *.conf files in a folder.
inline std::vector<std::string> conf_files(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".conf") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace tent::test
