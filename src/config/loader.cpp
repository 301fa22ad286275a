// load_config: defaults < system files < $TENT_CONFIG or ~/.config/tent.conf
// < explicit files < TENT_* environment < overrides (MCA), then the checks
// between knobs.
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "config/config.h"
#include "config/config_file.h"
#include "config/cross_checks.h"
#include "config/diagnostics.h"
#include "config/environment.h"
#include "config/ini_file.h"
#include "config/overrides.h"

extern char** environ;

#ifndef TENT_SYSCONFDIR
#define TENT_SYSCONFDIR "/etc"
#endif

namespace tent {
namespace {

enum class IfMissing { Skip, Error };

void load_file(const std::string& path, IfMissing if_missing, LoadResult& result) {
    if (if_missing == IfMissing::Skip && access(path.c_str(), F_OK) != 0 && errno == ENOENT) return;
    auto file = read_ini_file(path);
    if (!file) {
        add_error(result.diagnostics, file.status().message());
        return;
    }
    result.files_read.push_back(path);
    apply_ini_file(path, *file, result.config, result.diagnostics);
}

LoadResult load_all(const LoadOptions& options) {
    LoadResult result;
    char** env = options.environment ? options.environment : environ;
    if (options.use_standard_files) {
        for (const auto& path : options.system_files ? *options.system_files : standard_system_files())
            load_file(path, IfMissing::Skip, result);
        const char* user = find_env(env, "TENT_CONFIG");
        if (user && *user) {
            load_file(user, IfMissing::Error, result);
        } else if (const char* home = find_env(env, "HOME"); home && *home) {
            load_file(std::string(home) + "/.config/tent.conf", IfMissing::Skip, result);
        }
    }
    for (const auto& path : options.files) load_file(path, IfMissing::Error, result);
    if (options.use_environment) apply_environment(env, result.config, result.diagnostics);
    apply_overrides(options.overrides, result.config, result.diagnostics);
    check_cross_knob(result.config, result.diagnostics);
    return result;
}

} // namespace

std::vector<std::string> standard_system_files() {
    std::vector<std::string> files{"/etc/tent.conf"};
    std::string own = std::string(TENT_SYSCONFDIR) + "/tent.conf";
    if (own != files.front()) files.push_back(own);
    return files;
}

LoadResult load_config(const LoadOptions& options) {
    // Callers sit behind C entry points: even running out of memory while
    // loading becomes a diagnostic, never an exception.
    try {
        return load_all(options);
    } catch (const std::exception& e) {
        LoadResult failed;
        add_error(failed.diagnostics, std::string("cannot load the configuration: ") + e.what());
        return failed;
    }
}

} // namespace tent
