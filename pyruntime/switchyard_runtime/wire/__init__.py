"""The worker wire protocol: frames on the socket, and nothing above them.

protocol encodes and decodes frames (docs/protocol.md), framereader reads
request frames off a socket through one reusable buffer, and writer sends
whole frames under one lock. This part knows bytes, strings and counts, not
Input or Output: it imports nothing of switchyard's runtime outside itself.
"""
