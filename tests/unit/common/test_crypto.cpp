// HMAC-SHA256 with a prepared key (crypto.h) gives the MACs of RFC 4231's
// test cases, including a key longer than SHA-256's block (hashed first),
// keys of exactly a block and one byte more, an empty key, a message given
// in several parts, and the same MAC from several threads at once.
#include <criterion/criterion.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/crypto.h"

using namespace tent;

namespace {

std::span<const std::uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string hex(const Mac& m) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (std::uint8_t b : m) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

std::string mac_hex(const std::vector<std::uint8_t>& key, std::string_view message) {
    HmacKey k(key);
    auto m = k.mac({bytes(message)});
    cr_assert(m.is_ok(), "%s", m.status().to_string().c_str());
    return hex(*m);
}

} // namespace

Test(hmac, rfc4231_test_cases) {
    cr_expect_eq(mac_hex(std::vector<std::uint8_t>(20, 0x0b), "Hi There"),
                 "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    cr_expect_eq(mac_hex({'J', 'e', 'f', 'e'}, "what do ya want for nothing?"),
                 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    cr_expect_eq(mac_hex(std::vector<std::uint8_t>(131, 0xaa), "Test Using Larger Than Block-Size Key - Hash Key First"),
                 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

Test(hmac, keys_at_the_block_size_and_empty) {
    cr_expect_eq(mac_hex({}, ""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
    cr_expect_eq(mac_hex(std::vector<std::uint8_t>(64, 'k'), "abc"),
                 "ae0c0e4a2340cf50185eb46aaa8723f4769153661612e212fb0d1fa3170c6202");
    cr_expect_eq(mac_hex(std::vector<std::uint8_t>(65, 'k'), "abc"),
                 "ed378e5dfa30dc98814ba09b2e610d9b6af66054922ceef9480da094a3f11b2d");
}

Test(hmac, parts_are_one_message) {
    HmacKey k(std::vector<std::uint8_t>(20, 0x0b));
    auto m = k.mac({bytes("Hi"), bytes(""), bytes(" The"), bytes("re")});
    cr_assert(m.is_ok());
    cr_expect_eq(hex(*m), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

Test(hmac, one_key_serves_several_threads) {
    const HmacKey k(std::vector<std::uint8_t>{'J', 'e', 'f', 'e'});
    std::array<int, 4> wrong{};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < wrong.size(); ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                auto m = k.mac({bytes("what do ya want "), bytes("for nothing?")});
                if (!m.is_ok() || hex(*m) != "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
                    ++wrong[t];
            }
        });
    for (auto& th : threads) th.join();
    for (std::size_t t = 0; t < wrong.size(); ++t) cr_expect_eq(wrong[t], 0, "thread %zu got %d wrong MACs", t, wrong[t]);
}
