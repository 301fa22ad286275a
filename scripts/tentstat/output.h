// tentstat's repeating outputs: the screen refreshed in place (-w) and the
// node_exporter textfile kept current (--textfile-dir).
#pragma once

#include <functional>
#include <string>

namespace tent::tentstat {

// Redraws screen(width) every interval_s until 'q' (or Ctrl-C), or after
// `count` screens when count > 0. Returns the exit status.
int watch(const std::function<std::string(std::size_t width)>& screen, double interval_s, long count);

// Writes DIR/tent.prom atomically (a temporary file in DIR, then rename) every
// interval_s, until SIGTERM/SIGINT or after `count` writes when count > 0.
int keep_textfile(const std::function<std::string()>& text, const std::string& dir, double interval_s, long count);

} // namespace tent::tentstat
