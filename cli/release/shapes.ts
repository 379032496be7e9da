// The JSON and base64 shapes the release checks share.

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/** Standard (not URL-safe) base64 with its padding. */
export const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
