"""web-fetch's reading side: bytes to a Document (decode, extract, tidy, documents), no network."""
