// tent-bench: measures tent's write, read and send between two processes.
#include <cstdio>
#include <string>

#include "tent-bench/options.h"
#include "tent-bench/run.h"

int main(int argc, char** argv) {
    tent_bench::Options o;
    std::string message;
    int code = 0;
    if (!tent_bench::parse_options(argc, argv, o, message, code)) {
        std::fputs(message.c_str(), code == 0 ? stdout : stderr);
        return code;
    }
    return o.listen ? tent_bench::run_server(o) : tent_bench::run_client(o);
}
