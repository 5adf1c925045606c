#include "policy/check_digits.h"

#include <gtest/gtest.h>

namespace kimi::policy {
namespace {

TEST(LuhnTest, ValidNumbersPass) {
  for (const char* n : {"4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
                        "4012888888881881", "0"}) {
    EXPECT_TRUE(LuhnValid(n)) << n;
  }
}

TEST(LuhnTest, OneWrongDigitFails) {
  for (const char* n : {"4111111111111112", "5555555555554440", "378282246310006", "1"}) {
    EXPECT_FALSE(LuhnValid(n)) << n;
  }
}

TEST(LuhnTest, NonDigitsAndEmptyFail) {
  EXPECT_FALSE(LuhnValid(""));
  EXPECT_FALSE(LuhnValid("4111 1111 1111 1111"));
  EXPECT_FALSE(LuhnValid("41111111111111a1"));
}

TEST(IbanTest, ValidIbansPass) {
  for (const char* iban : {"GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606",
                           "NL91ABNA0417164300", "BE68539007547034", "CH9300762011623852957"}) {
    EXPECT_TRUE(IbanValid(iban)) << iban;
  }
}

TEST(IbanTest, WrongCheckDigitsOrShapeFail) {
  for (const char* iban : {"GB82WEST12345698765433", "GB83WEST12345698765432", "DE89370400440532013001",
                           "gb82WEST12345698765432", "GB82 WEST 1234 5698 7654 32", "GB8", "1282WEST12345698765432",
                           "GB82WEST1234569876543212345678901234"}) {
    EXPECT_FALSE(IbanValid(iban)) << iban;
  }
}

}  // namespace
}  // namespace kimi::policy
