#include "vigil/common/sha256.h"

#include <string>

#include "gtest/gtest.h"
#include "vigil/common/sha256_stream.h"

namespace vigil {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::array<uint8_t, 32> abc = Sha256("abc");
  EXPECT_EQ(abc[0], 0xba);
  EXPECT_EQ(abc[31], 0xad);
}

TEST(Sha256Stream, PiecesHashAsTheWhole) {
  // FIPS 180-2's million 'a's, given in uneven pieces.
  Sha256Stream h;
  const std::string piece(1000, 'a');
  for (int k = 0; k < 999; ++k) h.Update(piece);
  h.Update(std::string(999, 'a'));
  h.Update("a");
  h.Update("");
  EXPECT_EQ(h.FinishHex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  Sha256Stream empty;
  EXPECT_EQ(empty.FinishHex(), Sha256Hex(""));
}

}  // namespace
}  // namespace vigil
