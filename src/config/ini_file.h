// One INI file split into sections and key/value entries, each with its
// line number. inih does the splitting; we feed it one line at a time so
// that we know the line of every entry and can report every malformed line
// (inih itself reports only the first, and Debian builds it without
// INI_HANDLER_LINENO).
//
// Deliberate differences from plain inih: leading whitespace is ignored
// (indented keys are keys, not continuation lines), text after a section
// header's ']' is an error, and lines, section names and keys that inih
// would silently truncate are errors.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tent {

struct IniSection {
    std::string name;  // as written between '[' and ']', trimmed
    int line = 0;
    bool valid = true;  // false for a malformed header (already in errors); its keys are dropped
};

struct IniEntry {
    int section = -1;  // index into IniFile::sections; -1 = before any section
    std::string key;
    std::string value;
    int line = 0;
};

struct IniSyntaxError {
    int line = 0;
    std::string message;  // without the "file:line: " prefix
};

struct IniFile {
    std::vector<IniSection> sections;
    std::vector<IniEntry> entries;
    std::vector<IniSyntaxError> errors;
};

// Splits INI text; never fails, malformed lines land in errors.
IniFile parse_ini_text(const std::string& text);
// Reads and splits a file; an error Status only when it cannot be read.
Result<IniFile> read_ini_file(const std::string& path);

} // namespace tent
