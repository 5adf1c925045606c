#include "text/pretokenizer_classes.h"

#include <unicode/uchar.h>
#include <unicode/uscript.h>

namespace kimi::text {

uint8_t CharClasses::Compute(char32_t cp) {
  const UChar32 c = static_cast<UChar32>(cp);
  uint8_t flags = 0;

  UErrorCode error = U_ZERO_ERROR;
  const bool han = uscript_getScript(c, &error) == USCRIPT_HAN && U_SUCCESS(error);
  if (han) flags |= kClassHan;

  const int8_t category = u_charType(c);
  const bool letter = category == U_UPPERCASE_LETTER || category == U_LOWERCASE_LETTER ||
                      category == U_TITLECASE_LETTER || category == U_MODIFIER_LETTER ||
                      category == U_OTHER_LETTER;
  const bool mark = category == U_NON_SPACING_MARK || category == U_ENCLOSING_MARK ||
                    category == U_COMBINING_SPACING_MARK;
  const bool number = category == U_DECIMAL_DIGIT_NUMBER || category == U_LETTER_NUMBER ||
                      category == U_OTHER_NUMBER;
  if (letter) flags |= kClassLetter;
  if (number) flags |= kClassNumber;

  if (!han) {
    const bool modifier_or_other = category == U_MODIFIER_LETTER || category == U_OTHER_LETTER;
    if (category == U_UPPERCASE_LETTER || category == U_TITLECASE_LETTER || modifier_or_other ||
        mark) {
      flags |= kClassUpperish;
    }
    if (category == U_LOWERCASE_LETTER || modifier_or_other || mark) flags |= kClassLowerish;
  }

  if (u_isUWhiteSpace(c)) flags |= kClassSpace;

  const UCharDirection direction = u_charDirection(c);
  if (category == U_SPACE_SEPARATOR || direction == U_WHITE_SPACE_NEUTRAL ||
      direction == U_BLOCK_SEPARATOR || direction == U_SEGMENT_SEPARATOR) {
    flags |= kClassPySpace;
  }
  return flags;
}

CharClasses::CharClasses() : table_(kTableLimit) {
  for (char32_t cp = 0; cp < kTableLimit; ++cp) {
    // Surrogates never reach the scanner (the input is validated UTF-8); leave them empty.
    table_[cp] = (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : Compute(cp);
  }
}

const CharClasses& CharClasses::Get() {
  static const CharClasses* const instance = new CharClasses();
  return *instance;
}

}  // namespace kimi::text
