// The INI reader: line numbers of entries and errors, every malformed line
// reported, and the places where we are stricter than plain inih.
#include <criterion/criterion.h>

#include "config/ini_file.h"
#include "test_support.h"

using namespace tent;

Test(ini_file, entries_carry_their_line_and_section) {
    IniFile f = parse_ini_text("; comment\n\n[a]\nx = 1\n# another\n[b]\n  y : two words  \n");
    cr_assert_eq(f.errors.size(), 0u);
    cr_assert_eq(f.sections.size(), 2u);
    cr_expect(f.sections[0].name == "a" && f.sections[0].line == 3);
    cr_expect(f.sections[1].name == "b" && f.sections[1].line == 6);
    cr_assert_eq(f.entries.size(), 2u);
    cr_expect(f.entries[0].key == "x" && f.entries[0].value == "1" && f.entries[0].line == 4 && f.entries[0].section == 0);
    cr_expect(f.entries[1].key == "y" && f.entries[1].value == "two words" && f.entries[1].line == 7 &&
              f.entries[1].section == 1);
}

Test(ini_file, indented_line_is_a_key_not_a_continuation) {
    // Plain inih would append "b = 2" to a's value (multi-line values).
    IniFile f = parse_ini_text("[s]\na = 1\n    b = 2\n");
    cr_assert_eq(f.entries.size(), 2u);
    cr_expect(f.entries[0].value == "1");
    cr_expect(f.entries[1].key == "b" && f.entries[1].value == "2" && f.entries[1].line == 3);
}

Test(ini_file, inline_comment_needs_a_blank_before_semicolon) {
    IniFile f = parse_ini_text("[s]\na = x ; note\nb = x;y\nc = x # not a comment\n");
    cr_assert_eq(f.entries.size(), 3u);
    cr_expect(f.entries[0].value == "x");
    cr_expect(f.entries[1].value == "x;y");
    cr_expect(f.entries[2].value == "x # not a comment");
}

Test(ini_file, every_malformed_line_is_reported) {
    IniFile f = parse_ini_text("[s]\nbad one\na = 1\n[broken\nbad two\n[t] junk\n = 3\n");
    cr_assert_eq(f.errors.size(), 5u);
    int lines[] = {2, 4, 5, 6, 7};
    for (int i = 0; i < 5; ++i) cr_expect_eq(f.errors[i].line, lines[i], "error %d at line %d", i, f.errors[i].line);
    cr_expect(f.errors[1].message.find("missing ']'") != std::string::npos);
    cr_expect(f.errors[3].message.find("'junk'") != std::string::npos);
    // a = 1 (line 3) survives; nothing under the broken headers is applied.
    cr_assert_eq(f.entries.size(), 1u);
    cr_expect_eq(f.entries[0].line, 3);
}

Test(ini_file, lines_inih_would_truncate_are_errors) {
    std::string long_key(60, 'k');
    std::string long_section(60, 's');
    std::string long_line = "v = " + std::string(300, 'x');
    IniFile f = parse_ini_text("[s]\n" + long_key + " = 1\n[" + long_section + "]\n" + long_line + "\n[s]\nok = 1\n");
    cr_assert_eq(f.errors.size(), 3u);
    cr_expect_eq(f.errors[0].line, 2);
    cr_expect(f.errors[0].message.find("longer than 49") != std::string::npos, "%s", f.errors[0].message.c_str());
    cr_expect_eq(f.errors[1].line, 3);
    cr_expect_eq(f.errors[2].line, 4);
    cr_expect(f.errors[2].message.find("line longer than") != std::string::npos, "%s", f.errors[2].message.c_str());
    cr_assert_eq(f.entries.size(), 1u);
    cr_expect(f.entries[0].key == "ok" && f.entries[0].line == 6);
}

Test(ini_file, nul_byte_is_an_error_not_a_truncation) {
    std::string text = "[s]\na = 1";
    text += '\0';
    text += "2\nb = 3\n";
    IniFile f = parse_ini_text(text);
    cr_assert_eq(f.errors.size(), 1u);
    cr_expect_eq(f.errors[0].line, 2);
    cr_assert_eq(f.entries.size(), 1u);
    cr_expect(f.entries[0].key == "b");
}

Test(ini_file, byte_order_mark_only_on_first_line) {
    IniFile f = parse_ini_text("\xEF\xBB\xBF[s]\r\na = 1\r\n");
    cr_expect_eq(f.errors.size(), 0u);
    cr_assert_eq(f.entries.size(), 1u);
    cr_expect(f.entries[0].value == "1");  // the CR is gone too
}

Test(ini_file, unreadable_files_are_errors) {
    auto missing = read_ini_file("/nonexistent/tent.conf");
    cr_expect_not(missing.is_ok());
    cr_expect(missing.status().message().find("/nonexistent/tent.conf") != std::string::npos);
    test::TempDir dir;
    auto directory = read_ini_file(dir.path());
    cr_expect_not(directory.is_ok(), "a directory is not a configuration file");
    // /dev/zero never ends: the size cap keeps the reader bounded.
    auto endless = read_ini_file("/dev/zero");
    cr_expect_not(endless.is_ok());
}
