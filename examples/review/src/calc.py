def average(values):
    total = 0
    for value in values:
        total += value
    return total / len(values)


def percent(part, whole):
    return part / whole * 100


def parse_ratio(text):
    left, right = text.split(":")
    return int(left) / int(right)
