"""The interactive report's embedded data read back in Python: ``page_document(html)`` returns the page's JSON
document and a function giving one of its typed arrays (``[dtype, byte offset, length]``, encode.py's references)
as a numpy array, so a test can check what a page carries without a browser."""
import base64
import json
import re
import zlib

import numpy as np

DTYPES = {"f64": "<f8", "f32": "<f4", "i32": "<i4", "u8": "u1"}   # report.js ARRAYS


def page_document(html: str):
    """``(document, array)`` of a report's HTML text; ``array(ref)`` decodes one embedded array."""
    doc = json.loads(re.search(r'id="tfe-data">(.*?)</script>', html, re.S).group(1))
    blob = re.search(r'id="tfe-blob" data-encoding="(\w+)">(.*?)</script>', html, re.S)
    data = base64.b64decode(blob.group(2))
    if blob.group(1) == "deflate":
        data = zlib.decompress(data)

    def array(ref):
        return np.frombuffer(data, DTYPES[ref[0]], ref[2], ref[1])
    return doc, array
