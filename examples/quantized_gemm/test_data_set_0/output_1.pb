
BhJ*$0A5VšebAG{‹Wbfv†fŸ^zh]ywŠ