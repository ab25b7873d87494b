// Generated from src/contract/cli-output.ts (zod toJSONSchema) by test/unit/render-plain-check.test.ts; do not edit.
// After a change to those schemas: OD_UPDATE_GENERATED=1 OD_TEST_STACK=0 npx jest test/unit/render-plain-check.test.ts

export const WHO_OUTPUT_JSON_SCHEMA: { readonly [k: string]: unknown } = {
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "ok": {
      "type": "boolean",
      "const": true
    },
    "ownership": {
      "type": "object",
      "properties": {
        "schemaVersion": {
          "type": "number",
          "const": 1
        },
        "ownershipId": {
          "type": "string"
        },
        "repoRoot": {
          "type": "string"
        },
        "worktreePath": {
          "type": "string"
        },
        "branch": {
          "type": "string"
        },
        "hostId": {
          "type": "string"
        },
        "lane": {
          "type": [
            "string",
            "null"
          ]
        },
        "planRef": {
          "type": [
            "string",
            "null"
          ]
        },
        "requestId": {
          "type": [
            "string",
            "null"
          ]
        },
        "worker": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "runId": {
                  "anyOf": [
                    {
                      "type": "string",
                      "minLength": 1,
                      "maxLength": 200,
                      "pattern": "^[A-Za-z0-9._:@/+-]+$"
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "workerId": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 200,
                  "pattern": "^[A-Za-z0-9._:@/+-]+$"
                }
              },
              "required": [
                "runId",
                "workerId"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "owner": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "executionSessionId": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 200,
                  "pattern": "^[A-Za-z0-9._:@/+-]+$"
                },
                "runtime": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 200,
                  "pattern": "^[A-Za-z0-9._:@/+-]+$"
                },
                "parentExecutionSessionId": {
                  "anyOf": [
                    {
                      "type": "string",
                      "minLength": 1,
                      "maxLength": 200,
                      "pattern": "^[A-Za-z0-9._:@/+-]+$"
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "conversation": {
                  "anyOf": [
                    {
                      "type": "object",
                      "properties": {
                        "provider": {
                          "type": "string"
                        },
                        "conversationId": {
                          "type": "string"
                        },
                        "conversationUrl": {
                          "type": "string"
                        },
                        "title": {
                          "type": [
                            "string",
                            "null"
                          ]
                        },
                        "observedAt": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "provider",
                        "conversationId",
                        "conversationUrl",
                        "observedAt"
                      ],
                      "additionalProperties": false
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "worker": {
                  "anyOf": [
                    {
                      "type": "object",
                      "properties": {
                        "runId": {
                          "anyOf": [
                            {
                              "type": "string",
                              "minLength": 1,
                              "maxLength": 200,
                              "pattern": "^[A-Za-z0-9._:@/+-]+$"
                            },
                            {
                              "type": "null"
                            }
                          ]
                        },
                        "workerId": {
                          "type": "string",
                          "minLength": 1,
                          "maxLength": 200,
                          "pattern": "^[A-Za-z0-9._:@/+-]+$"
                        }
                      },
                      "required": [
                        "runId",
                        "workerId"
                      ],
                      "additionalProperties": false
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "process": {
                  "anyOf": [
                    {
                      "type": "object",
                      "properties": {
                        "hostId": {
                          "type": "string",
                          "minLength": 1,
                          "maxLength": 200,
                          "pattern": "^[A-Za-z0-9._:@/+-]+$"
                        },
                        "bootId": {
                          "type": "string",
                          "minLength": 1,
                          "maxLength": 200,
                          "pattern": "^[A-Za-z0-9._:@/+-]+$"
                        },
                        "pid": {
                          "type": "integer",
                          "exclusiveMinimum": 0,
                          "maximum": 9007199254740991
                        },
                        "startTime": {
                          "type": "string",
                          "minLength": 1,
                          "maxLength": 64
                        }
                      },
                      "required": [
                        "hostId",
                        "bootId",
                        "pid",
                        "startTime"
                      ],
                      "additionalProperties": false
                    },
                    {
                      "type": "null"
                    }
                  ]
                }
              },
              "required": [
                "executionSessionId",
                "runtime",
                "parentExecutionSessionId",
                "conversation",
                "worker",
                "process"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "state": {
          "type": "string",
          "enum": [
            "active",
            "handoff_pending",
            "stale",
            "released",
            "submitted",
            "landed",
            "closed"
          ]
        },
        "epoch": {
          "type": "integer",
          "minimum": -9007199254740991,
          "maximum": 9007199254740991
        },
        "seq": {
          "type": "integer",
          "minimum": -9007199254740991,
          "maximum": 9007199254740991
        },
        "claimedAt": {
          "anyOf": [
            {
              "type": "string",
              "format": "date-time",
              "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
            },
            {
              "type": "null"
            }
          ]
        },
        "lastSeenAt": {
          "anyOf": [
            {
              "type": "string",
              "format": "date-time",
              "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
            },
            {
              "type": "null"
            }
          ]
        },
        "handoff": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "handoffId": {
                  "type": "string"
                },
                "toExecutionSessionId": {
                  "type": "string"
                },
                "toWorkerId": {
                  "type": [
                    "string",
                    "null"
                  ]
                },
                "startedAt": {
                  "type": "string",
                  "format": "date-time",
                  "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
                },
                "expiresAt": {
                  "type": "string",
                  "format": "date-time",
                  "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
                }
              },
              "required": [
                "handoffId",
                "toExecutionSessionId",
                "startedAt",
                "expiresAt"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "lineage": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "executionSessionId": {
                "type": "string"
              },
              "runtime": {
                "type": "string"
              },
              "epoch": {
                "type": "integer",
                "minimum": -9007199254740991,
                "maximum": 9007199254740991
              },
              "via": {
                "type": "string",
                "enum": [
                  "bind",
                  "handoff",
                  "after_release",
                  "reclaim",
                  "forced_reclaim"
                ]
              },
              "at": {
                "type": "string",
                "format": "date-time",
                "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
              },
              "conversationId": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "handoffId": {
                "type": "string"
              },
              "previousExecutionSessionId": {
                "type": [
                  "string",
                  "null"
                ]
              }
            },
            "required": [
              "executionSessionId",
              "runtime",
              "epoch",
              "via",
              "at",
              "conversationId"
            ],
            "additionalProperties": false
          }
        },
        "latestWip": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "ref": {
                  "type": "string"
                },
                "sha": {
                  "type": "string"
                },
                "at": {
                  "type": "string",
                  "format": "date-time",
                  "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
                },
                "files": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 9007199254740991
                },
                "bytes": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 9007199254740991
                }
              },
              "required": [
                "ref",
                "sha",
                "at"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "wipNotPreserved": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "at": {
                  "type": "string",
                  "format": "date-time",
                  "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
                },
                "reason": {
                  "type": "string"
                },
                "executionSessionId": {
                  "type": "string"
                }
              },
              "required": [
                "at",
                "reason",
                "executionSessionId"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "submitted": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "at": {
                  "type": "string",
                  "format": "date-time",
                  "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
                },
                "head": {
                  "type": [
                    "string",
                    "null"
                  ]
                }
              },
              "required": [
                "at",
                "head"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "landings": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "ownershipId": {
                "type": "string"
              },
              "sourceBranch": {
                "type": "string"
              },
              "sourceHead": {
                "type": "string",
                "pattern": "^(?:[0-9a-f]{40}|[0-9a-f]{64})$"
              },
              "landedBranch": {
                "type": "string",
                "minLength": 1,
                "maxLength": 255
              },
              "landedHead": {
                "type": "string",
                "pattern": "^(?:[0-9a-f]{40}|[0-9a-f]{64})$"
              },
              "landedAt": {
                "type": "string",
                "format": "date-time",
                "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
              },
              "worktreePath": {
                "type": "string"
              },
              "executionSessionId": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "worker": {
                "anyOf": [
                  {
                    "type": "object",
                    "properties": {
                      "runId": {
                        "anyOf": [
                          {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 200,
                            "pattern": "^[A-Za-z0-9._:@/+-]+$"
                          },
                          {
                            "type": "null"
                          }
                        ]
                      },
                      "workerId": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "pattern": "^[A-Za-z0-9._:@/+-]+$"
                      }
                    },
                    "required": [
                      "runId",
                      "workerId"
                    ],
                    "additionalProperties": false
                  },
                  {
                    "type": "null"
                  }
                ]
              },
              "conversation": {
                "anyOf": [
                  {
                    "type": "object",
                    "properties": {
                      "provider": {
                        "type": "string"
                      },
                      "conversationId": {
                        "type": "string"
                      },
                      "conversationUrl": {
                        "type": "string"
                      },
                      "title": {
                        "type": [
                          "string",
                          "null"
                        ]
                      },
                      "observedAt": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "provider",
                      "conversationId",
                      "conversationUrl",
                      "observedAt"
                    ],
                    "additionalProperties": false
                  },
                  {
                    "type": "null"
                  }
                ]
              }
            },
            "required": [
              "ownershipId",
              "sourceBranch",
              "sourceHead",
              "landedBranch",
              "landedHead",
              "landedAt",
              "worktreePath",
              "executionSessionId",
              "worker",
              "conversation"
            ],
            "additionalProperties": false
          }
        },
        "worktreeRemoved": {
          "type": "boolean"
        },
        "branchNames": {
          "type": "array",
          "items": {
            "type": "string"
          }
        },
        "holds": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "holdId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9._:@/+-]+$"
              },
              "executionSessionId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9._:@/+-]+$"
              },
              "parentExecutionSessionId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9._:@/+-]+$"
              },
              "epoch": {
                "type": "integer",
                "exclusiveMinimum": 0,
                "maximum": 9007199254740991
              },
              "grantedAt": {
                "type": "string",
                "format": "date-time",
                "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$"
              },
              "leaseTtlMs": {
                "type": "integer",
                "minimum": 1000,
                "maximum": 86400000
              },
              "runtime": {
                "anyOf": [
                  {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": "^[A-Za-z0-9._:@/+-]+$"
                  },
                  {
                    "type": "null"
                  }
                ]
              }
            },
            "required": [
              "holdId",
              "executionSessionId",
              "parentExecutionSessionId",
              "epoch",
              "grantedAt",
              "leaseTtlMs",
              "runtime"
            ],
            "additionalProperties": false
          }
        },
        "liveness": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "status": {
                  "type": "string",
                  "enum": [
                    "live",
                    "silent",
                    "stale",
                    "unowned"
                  ]
                },
                "verdict": {
                  "anyOf": [
                    {
                      "type": "string",
                      "enum": [
                        "alive",
                        "dead",
                        "unknown"
                      ]
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "lastHeartbeatAt": {
                  "type": [
                    "string",
                    "null"
                  ]
                },
                "checkedAt": {
                  "type": [
                    "string",
                    "null"
                  ]
                },
                "leaseTtlMs": {
                  "type": "integer",
                  "minimum": -9007199254740991,
                  "maximum": 9007199254740991
                }
              },
              "required": [
                "status",
                "verdict",
                "lastHeartbeatAt",
                "checkedAt",
                "leaseTtlMs"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "branchStatus": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "head": {
                  "type": "string"
                },
                "base": {
                  "type": [
                    "string",
                    "null"
                  ]
                },
                "ahead": {
                  "anyOf": [
                    {
                      "type": "integer",
                      "minimum": -9007199254740991,
                      "maximum": 9007199254740991
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "behind": {
                  "anyOf": [
                    {
                      "type": "integer",
                      "minimum": -9007199254740991,
                      "maximum": 9007199254740991
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "at": {
                  "type": "string"
                }
              },
              "required": [
                "head",
                "base",
                "ahead",
                "behind",
                "at"
              ],
              "additionalProperties": false
            },
            {
              "type": "null"
            }
          ]
        },
        "enforcement": {
          "anyOf": [
            {
              "type": "object",
              "properties": {
                "hostId": {
                  "type": "string"
                },
                "state": {
                  "type": "string",
                  "enum": [
                    "enforced",
                    "pending",
                    "not_enforced",
                    "failed"
                  ]
                },
                "hostAgent": {
                  "type": "string",
                  "enum": [
                    "up",
                    "away"
                  ]
                },
                "hostAgentSeenAgoMs": {
                  "anyOf": [
                    {
                      "type": "integer",
                      "minimum": -9007199254740991,
                      "maximum": 9007199254740991
                    },
                    {
                      "type": "null"
                    }
                  ],
                  "description": "since the host agent last beat, when it beats at all"
                }
              },
              "required": [
                "hostId",
                "state",
                "hostAgent",
                "hostAgentSeenAgoMs"
              ],
              "additionalProperties": false,
              "description": "whether the hooks on the worktree’s host enforce this record, and whether that host’s agent is there"
            },
            {
              "type": "null"
            }
          ]
        },
        "observers": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "executionSessionId": {
                "type": "string"
              },
              "workerId": {
                "type": "string"
              },
              "runtime": {
                "type": "string"
              },
              "registeredAt": {
                "type": "string"
              },
              "lastSeenAt": {
                "type": "string"
              },
              "expiresAt": {
                "type": "string"
              }
            },
            "required": [
              "executionSessionId",
              "workerId",
              "runtime",
              "registeredAt",
              "lastSeenAt",
              "expiresAt"
            ],
            "additionalProperties": false
          }
        }
      },
      "required": [
        "schemaVersion",
        "ownershipId",
        "repoRoot",
        "worktreePath",
        "branch",
        "hostId",
        "lane",
        "planRef",
        "requestId",
        "worker",
        "owner",
        "state",
        "epoch",
        "seq",
        "claimedAt",
        "lastSeenAt",
        "handoff",
        "lineage",
        "latestWip",
        "submitted",
        "landings",
        "worktreeRemoved",
        "branchNames"
      ],
      "additionalProperties": false
    },
    "liveness": {
      "anyOf": [
        {
          "type": "object",
          "properties": {
            "status": {
              "type": "string",
              "enum": [
                "live",
                "silent",
                "stale",
                "unowned"
              ]
            },
            "verdict": {
              "anyOf": [
                {
                  "type": "string",
                  "enum": [
                    "alive",
                    "dead",
                    "unknown"
                  ]
                },
                {
                  "type": "null"
                }
              ]
            },
            "lastHeartbeatAt": {
              "type": [
                "string",
                "null"
              ]
            },
            "checkedAt": {
              "type": [
                "string",
                "null"
              ]
            },
            "leaseTtlMs": {
              "type": "integer",
              "minimum": -9007199254740991,
              "maximum": 9007199254740991
            }
          },
          "required": [
            "status",
            "verdict",
            "lastHeartbeatAt",
            "checkedAt",
            "leaseTtlMs"
          ],
          "additionalProperties": false
        },
        {
          "type": "null"
        }
      ]
    },
    "branch": {
      "anyOf": [
        {
          "type": "object",
          "properties": {
            "head": {
              "type": "string"
            },
            "base": {
              "type": [
                "string",
                "null"
              ]
            },
            "ahead": {
              "anyOf": [
                {
                  "type": "integer",
                  "minimum": -9007199254740991,
                  "maximum": 9007199254740991
                },
                {
                  "type": "null"
                }
              ]
            },
            "behind": {
              "anyOf": [
                {
                  "type": "integer",
                  "minimum": -9007199254740991,
                  "maximum": 9007199254740991
                },
                {
                  "type": "null"
                }
              ]
            },
            "at": {
              "type": "string"
            }
          },
          "required": [
            "head",
            "base",
            "ahead",
            "behind",
            "at"
          ],
          "additionalProperties": false
        },
        {
          "type": "null"
        }
      ]
    }
  },
  "required": [
    "ok",
    "ownership",
    "liveness"
  ],
  "additionalProperties": false
};

export const CLI_ERROR_JSON_SCHEMA: { readonly [k: string]: unknown } = {
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "ok": {
      "type": "boolean",
      "const": false
    },
    "code": {
      "type": "string"
    },
    "error": {
      "type": "string"
    }
  },
  "required": [
    "ok",
    "code",
    "error"
  ],
  "additionalProperties": false
};
