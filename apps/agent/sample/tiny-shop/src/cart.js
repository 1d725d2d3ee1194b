// Pricing core: subtotals, discounts and tax, all in integer cents.

/** Sum of price × quantity over the items, in cents. */
export function subtotal(items) {
  let total = 0
  for (const item of items) {
    if (!Number.isInteger(item.priceCents) || item.priceCents < 0) {
      throw new RangeError(`bad price for ${item.sku}: ${item.priceCents}`)
    }
    total += item.priceCents * item.qty
  }
  return total
}

/** The total after a discount given in percent (0-100), rounded to whole cents. */
export function applyDiscount(totalCents, percent) {
  if (percent < 0 || percent > 100) throw new RangeError(`discount out of range: ${percent}`)
  return Math.round(totalCents - totalCents * percent)
}

/** Tax on an amount, at a rate in basis points (1 bp = 0.01%), rounded half up. */
export function tax(amountCents, rateBp) {
  return Math.floor((amountCents * rateBp + 5000) / 10000)
}

/** The whole checkout: subtotal, discount, tax. */
export function checkout(items, { discountPercent = 0, taxRateBp = 0 } = {}) {
  const sub = subtotal(items)
  const discounted = applyDiscount(sub, discountPercent)
  const taxCents = tax(discounted, taxRateBp)
  return { subtotal: sub, discounted, tax: taxCents, total: discounted + taxCents }
}
