#include "config/ini_file.h"

#include <ini.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace tent {
namespace {

// inih keeps section names and keys in 50-byte buffers and truncates
// silently; we refuse longer ones instead.
constexpr std::size_t kMaxName = 49;
// A configuration file is small; the cap keeps TENT_CONFIG=/dev/zero harmless.
constexpr std::size_t kMaxFileBytes = 1 << 20;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// Same rule as inih's: the first of `chars`, or ';' after whitespace (an
// inline comment), or the end.
std::size_t find_chars_or_comment(std::string_view s, std::string_view chars) {
    bool was_space = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (chars.find(s[i]) != std::string_view::npos) return i;
        if (was_space && s[i] == ';') return i;
        was_space = is_space(s[i]);
    }
    return s.size();
}

struct ParseState {
    std::vector<std::string_view> lines;
    std::size_t next = 0;
    IniFile file;
    bool valid_section = true;  // false after a broken header: its keys are dropped

    void error(std::string message) {
        file.errors.push_back({static_cast<int>(next), std::move(message)});
    }

    // Checks one trimmed line; returns the text to hand to inih ("" for a
    // line we rejected, so that inih does not see it at all).
    std::string_view check_line(std::string_view line, std::size_t capacity) {
        if (line.find('\0') != std::string_view::npos) {
            error("line contains a NUL byte");
            return {};
        }
        if (line.size() > capacity) {
            error("line longer than " + std::to_string(capacity) + " characters");
            return {};
        }
        if (line.empty() || line.front() == ';' || line.front() == '#') return line;
        if (line.front() == '[') return check_section(line);
        std::size_t eq = find_chars_or_comment(line, "=:");
        if (eq == line.size() || (line[eq] != '=' && line[eq] != ':')) {
            error("expected 'key = value', found '" + std::string(line) + "'");
            return {};
        }
        std::string_view key = trim(line.substr(0, eq));
        if (key.empty()) {
            error("missing key before '" + std::string(1, line[eq]) + "'");
            return {};
        }
        if (key.size() > kMaxName) {
            error("key '" + std::string(key) + "' is longer than " + std::to_string(kMaxName) +
                  " characters");
            return {};
        }
        return line;
    }

    std::string_view check_section(std::string_view line) {
        std::size_t end = find_chars_or_comment(line.substr(1), "]") + 1;
        bool ok = true;
        if (end >= line.size() || line[end] != ']') {
            error("unterminated section header '" + std::string(line) + "' (missing ']')");
            ok = false;
        } else {
            std::string_view rest = trim(line.substr(end + 1));
            if (!rest.empty() && rest.front() != ';' && rest.front() != '#') {
                error("unexpected text '" + std::string(rest) + "' after section header");
                ok = false;
            } else if (line.substr(1, end - 1).size() > kMaxName) {
                error("section name longer than " + std::to_string(kMaxName) + " characters");
                ok = false;
            }
        }
        std::string name = ok ? std::string(trim(line.substr(1, end - 1))) : std::string(line);
        file.sections.push_back({std::move(name), static_cast<int>(next), ok});
        valid_section = ok;
        return ok ? line : std::string_view{};
    }
};

// inih's reader callback: hands over exactly one line per call, so inih's
// line count and ours agree.
char* read_line(char* buf, int num, void* stream) {
    auto* st = static_cast<ParseState*>(stream);
    if (st->next >= st->lines.size() || num < 2) return nullptr;
    std::string_view line = st->lines[st->next++];
    if (st->next == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    std::string_view text = st->check_line(trim(line), static_cast<std::size_t>(num - 1));
    if (!text.empty()) std::memcpy(buf, text.data(), text.size());  // an empty view's data() may be null
    buf[text.size()] = '\0';
    return buf;
}

int on_entry(void* user, const char*, const char* name, const char* value) {
    auto* st = static_cast<ParseState*>(user);
    if (!st->valid_section) return 1;
    int section = st->file.sections.empty() ? -1 : static_cast<int>(st->file.sections.size()) - 1;
    st->file.entries.push_back({section, name, value, static_cast<int>(st->next)});
    return 1;
}

} // namespace

IniFile parse_ini_text(const std::string& text) {
    ParseState st;
    std::string_view rest = text;
    while (!rest.empty()) {
        std::size_t nl = rest.find('\n');
        st.lines.push_back(rest.substr(0, nl));
        if (nl == std::string_view::npos) break;
        rest.remove_prefix(nl + 1);
    }
    int rc = ini_parse_stream(read_line, &st, on_entry, &st);
    // Every line inih could reject was already checked; anything it still
    // rejects is reported rather than ignored.
    if (rc != 0) {
        bool known = false;
        for (const auto& e : st.file.errors) known = known || e.line == rc;
        if (!known) st.file.errors.push_back({rc, rc < 0 ? "cannot parse (out of memory)" : "malformed line"});
    }
    return std::move(st.file);
}

Result<IniFile> read_ini_file(const std::string& path) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) return Status::from_errno(errno, "cannot open " + path);
    std::string text;
    char buf[8192];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
        text.append(buf, n);
        if (text.size() > kMaxFileBytes)
            return Status(Code::InvalidArgument,
                          path + ": file larger than " + std::to_string(kMaxFileBytes) + " bytes");
    }
    if (std::ferror(f.get())) return Status::from_errno(errno, "cannot read " + path);
    return parse_ini_text(text);
}

} // namespace tent
