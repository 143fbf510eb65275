"""The lines of a dataset file: UTF-8 decoding, byte-order mark, line ends.

Every reader of `mixvocab_tf.datasets` starts here, so a file in another
encoding is refused with the line (and the byte) where the trouble is,
whatever its format, and the UTF-8 byte-order mark that Excel's "CSV UTF-8"
writes is dropped.
"""

import tensorflow as tf

from mixvocab_tf.datasets import errors

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_lines(path: str, expected: str) -> list[str]:
  """The lines of a UTF-8 file, without '\\n' or a final '\\r'.

  A final newline ends the last line; it does not start an empty one. The
  file is split on '\\n' only (`str.splitlines` would also split texts at
  the Unicode separators they may hold). A leading UTF-8 byte-order mark is
  dropped.

  Args:
    path: the file.
    expected: what the file should hold, for the message of an empty file.

  Raises:
    DataError: the file is missing, is UTF-16 or holds a NUL byte, is not
      UTF-8 (the message gives the line and the byte offset), or holds
      nothing but blank lines.
  """
  if not errors.isfile(path):
    raise errors.data_error(path, None, "the file does not exist", expected)
  with tf.io.gfile.GFile(path, "rb") as f:
    data = f.read()
  convert = ("Convert it, e.g. `iconv -f utf-16 -t utf-8 FILE > NEW_FILE`, "
             "or save it again as UTF-8 (in Excel: 'CSV UTF-8').")
  if data.startswith(_UTF16_BOMS):
    raise errors.data_error(
        path, 1,
        "the file is UTF-16 (it starts with UTF-16's byte-order mark, as "
        "Excel's 'Unicode Text' and Windows tools write)",
        "a file encoded as UTF-8", convert)
  nul = data.find(b"\x00")
  if nul >= 0:
    raise errors.data_error(
        path, data.count(b"\n", 0, nul) + 1,
        f"byte offset {nul} of the file is a NUL byte (0x00), which no text "
        "holds; a UTF-16 file has one in every other byte of English text",
        "a file encoded as UTF-8", convert)
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError as e:
    line = data.count(b"\n", 0, e.start) + 1
    line_start = data.rfind(b"\n", 0, e.start) + 1
    before = data[max(line_start, e.start - 30):e.start].decode(
        "utf-8", errors="replace")
    raise errors.data_error(
        path, line,
        f"byte offset {e.start} of the file (byte {e.start - line_start} of "
        f"the line, counting from 0) holds {data[e.start:e.end]!r}, which is "
        f"not valid UTF-8 ({e.reason}); the text before it is "
        f"{errors.show(before)}",
        "a file encoded as UTF-8",
        "The file is probably in another encoding (Latin-1 or Windows-1252 "
        "are common): convert it, e.g. `iconv -f cp1252 -t utf-8 FILE > "
        "NEW_FILE`, or save it again as UTF-8.") from None
  # Dropped after decoding, so that a UTF-8 error's byte offset is the file's.
  if text.startswith("\ufeff"):
    text = text[1:]
  lines = text.split("\n")
  if lines[-1] == "":
    lines.pop()
  lines = [line.rstrip("\r") for line in lines]
  if not any(line.strip() for line in lines):
    raise errors.data_error(
        path, None, "the file is empty (or holds only blank lines)", expected)
  return lines
