#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <memory>

namespace tent {

Result<Mac> hmac_sha256(std::span<const std::uint8_t> key,
                        std::initializer_list<std::span<const std::uint8_t>> parts) {
    const Status failed(Code::SystemError, "HMAC-SHA256 failed in OpenSSL");
    Mac out{};
    // HMAC_CTX is deprecated in OpenSSL 3; the EVP_MAC interface is its successor.
    std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr), &EVP_MAC_free);
    if (!mac) return failed;
    std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()), &EVP_MAC_CTX_free);
    if (!ctx) return failed;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    // A zero-length key is legal HMAC, but OpenSSL wants a valid pointer.
    static const std::uint8_t empty = 0;
    if (EVP_MAC_init(ctx.get(), key.empty() ? &empty : key.data(), key.size(), params) != 1) return failed;
    for (auto part : parts)
        if (!part.empty() && EVP_MAC_update(ctx.get(), part.data(), part.size()) != 1) return failed;
    std::size_t len = 0;
    if (EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) != 1 || len != out.size()) return failed;
    return out;
}

Status random_bytes(std::span<std::uint8_t> out) {
    if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
        return Status(Code::SystemError, "no random bytes from OpenSSL's RAND_bytes");
    return Status::ok();
}

bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace tent
