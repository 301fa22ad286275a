#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <vector>

namespace tent {

namespace {
// tent's threads may still run while the program they live in exits; the
// cleanup OpenSSL would register with atexit() frees its locks under them
// (a TCP rail accepted during exit crashed in RAND_bytes).
void init_openssl() {
    static const bool done = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
    (void)done;
}
} // namespace

Result<Mac> hmac_sha256(std::span<const std::uint8_t> key,
                        std::initializer_list<std::span<const std::uint8_t>> parts) {
    // The one-shot HMAC() (not deprecated in OpenSSL 3, unlike HMAC_CTX)
    // over the parts joined: they are a label and two nonces, under 128 bytes.
    init_openssl();
    std::vector<std::uint8_t> data;
    for (auto part : parts) data.insert(data.end(), part.begin(), part.end());
    static const std::uint8_t empty = 0;  // HMAC wants valid pointers even for no bytes
    Mac out{};
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), key.empty() ? &empty : key.data(), static_cast<int>(key.size()),
             data.empty() ? &empty : data.data(), data.size(), out.data(), &len) == nullptr ||
        len != out.size())
        return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL");
    return out;
}

Status random_bytes(std::span<std::uint8_t> out) {
    init_openssl();
    if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
        return Status(Code::SystemError, "no random bytes from OpenSSL's RAND_bytes");
    return Status::ok();
}

bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace tent
