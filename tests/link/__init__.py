"""The extension link: the socket, the broker's proof and pairing, admission, versions, the original protocol."""
