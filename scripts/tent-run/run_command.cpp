#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "config/config.h"
#include "tent-run/commands.h"

namespace tent::tools {

int run_command(int argc, char** argv, FILE* err) {
    (void)argc;
    // Refuse to start a job whose configuration tent would reject.
    LoadResult loaded = load_config();
    for (const auto& d : loaded.diagnostics)
        std::fprintf(err, "tent-run: %s: %s\n",
                     d.severity == Diagnostic::Severity::Error ? "error" : "warning", d.message.c_str());
    if (!loaded.ok()) return 1;

    // A library ld.so cannot find is only a warning of ld.so's, and the
    // command would run without tent: refuse instead.
    std::string lib = library_to_preload();
    if (lib.find('/') != std::string::npos && access(lib.c_str(), R_OK) != 0) {
        std::fprintf(err, "tent-run: tent library not found: %s: %s\n", lib.c_str(), std::strerror(errno));
        return 127;
    }
    // The library wraps verbs only when LD_PRELOAD names a file called
    // libtent.so* (it must tell a preload from a program linked with it):
    // under another name the command would run without tent, silently.
    if (lib.compare(lib.rfind('/') + 1, 10, "libtent.so") != 0) {
        std::fprintf(err, "tent-run: %s: the library's file name must start with libtent.so (tent wraps verbs only "
                          "when LD_PRELOAD names it so)\n", lib.c_str());
        return 1;
    }
    std::string preload = lib;
    if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    execvp(argv[0], argv);
    std::fprintf(err, "tent-run: cannot run %s: %s\n", argv[0], std::strerror(errno));
    return 127;
}

} // namespace tent::tools
