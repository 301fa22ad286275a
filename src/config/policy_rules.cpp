#include "config/policy_rules.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"
#include "config/value_parser.h"

namespace tent {
namespace {

struct KeySyntax {
    const char* key;
    enum { Keyword, KeywordList, NameList, Size } kind;
    const char* choices;  // '|'-separated for Keyword and KeywordList
};

// One row per policy key: adding a key or a transport name is one edit here.
constexpr KeySyntax kKeys[] = {
    {"segment_type", KeySyntax::Keyword, "memory|file|any"},
    {"priority", KeySyntax::Keyword, "high|medium|low|any"},
    {"devices", KeySyntax::NameList, ""},
    {"transports", KeySyntax::KeywordList, "rdma|tcp|shm"},
    {"min_size", KeySyntax::Size, ""},
    {"max_size", KeySyntax::Size, ""},
    {"local_memory", KeySyntax::Keyword, "host|cuda|any"},
    {"remote_memory", KeySyntax::Keyword, "host|cuda|any"},
    {"same_machine", KeySyntax::Keyword, "true|false|any"},
};

const KeySyntax* find_key(std::string_view key) {
    for (const auto& k : kKeys)
        if (key == k.key) return &k;
    return nullptr;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool is_choice(std::string_view choices, const std::string& word) {
    std::size_t pos = 0;
    while (pos <= choices.size()) {
        std::size_t bar = std::min(choices.find('|', pos), choices.size());
        if (choices.substr(pos, bar - pos) == word) return true;
        pos = bar + 1;
    }
    return false;
}

bool is_device_name(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

Status rejected(const std::string& value, const std::string& why, const std::string& accepted) {
    return Status(Code::InvalidArgument, "value '" + value + "' " + why + " (accepted: " + accepted + ")");
}

} // namespace

const std::vector<std::string>& policy_rule_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> v;
        for (const auto& k : kKeys) v.emplace_back(k.key);
        return v;
    }();
    return keys;
}

bool is_policy_rule_key(std::string_view key) { return find_key(key) != nullptr; }

bool is_valid_policy_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

Result<std::string> check_policy_value(const std::string& key, const std::string& value) {
    const KeySyntax* k = find_key(key);
    if (!k) return Status(Code::NotFound, "unknown policy key '" + key + "'");
    switch (k->kind) {
    case KeySyntax::Keyword: {
        std::string v = lower(value);
        if (!is_choice(k->choices, v)) return rejected(value, "is not accepted", k->choices);
        return v;
    }
    case KeySyntax::KeywordList:
    case KeySyntax::NameList: {
        std::string accepted = k->kind == KeySyntax::NameList
                                   ? std::string("comma-separated device names")
                                   : "comma-separated list of " + std::string(k->choices);
        std::string out;
        for (const auto& item : split_commas(value)) {
            std::string v = k->kind == KeySyntax::KeywordList ? lower(item) : item;
            if (v.empty()) return rejected(value, "has an empty list item", accepted);
            bool ok = k->kind == KeySyntax::KeywordList ? is_choice(k->choices, v) : is_device_name(v);
            if (!ok) return rejected(value, "contains '" + item + "'", accepted);
            out += (out.empty() ? "" : ",") + v;
        }
        return out;
    }
    case KeySyntax::Size: {
        auto n = parse_size(value);
        if (!n) return rejected(value, "is not a size", "bytes, or with K, M, G, T suffix");
        return value;
    }
    }
    return Status(Code::Internal, "unhandled policy key kind");
}

std::vector<std::string> check_policy_rule(const PolicyRule& rule) {
    std::vector<std::string> errors;
    auto min_it = rule.keys.find("min_size");
    auto max_it = rule.keys.find("max_size");
    if (min_it != rule.keys.end() && max_it != rule.keys.end()) {
        auto lo = parse_size(min_it->second);
        auto hi = parse_size(max_it->second);
        if (lo && hi && *lo > *hi)
            errors.push_back("policy '" + rule.name + "': min_size " + min_it->second + " (" +
                             rule.key_sources.at("min_size").to_string() + ") is larger than max_size " +
                             max_it->second + " (" + rule.key_sources.at("max_size").to_string() + ")");
    }
    return errors;
}

} // namespace tent
