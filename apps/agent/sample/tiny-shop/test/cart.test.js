import assert from "node:assert/strict"
import { test } from "node:test"
import { applyDiscount, checkout, subtotal, tax } from "../src/cart.js"

const items = [
  { sku: "MUG-01", priceCents: 1250, qty: 2 },
  { sku: "TEE-07", priceCents: 1999, qty: 1 }
]

test("subtotal sums price times quantity", () => {
  assert.equal(subtotal(items), 4499)
})

test("a 10% discount takes a tenth off", () => {
  assert.equal(applyDiscount(20000, 10), 18000)
})

test("no discount leaves the total alone", () => {
  assert.equal(applyDiscount(4499, 0), 4499)
})

test("tax rounds half up", () => {
  assert.equal(tax(1000, 825), 83)
})

test("checkout with discount and tax", () => {
  assert.deepEqual(checkout(items, { discountPercent: 20, taxRateBp: 1000 }), {
    subtotal: 4499,
    discounted: 3599,
    tax: 360,
    total: 3959
  })
})
